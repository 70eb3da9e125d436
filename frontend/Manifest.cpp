// Builds the JSON manifest of a Program (see Manifest.h for the schema).
#include "frontend/Manifest.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <type_traits>

namespace modelc {

namespace {
// Keys keep the order they are written in, so the file reads top-down.
using Json = nlohmann::ordered_json;

Json attrToJson(const Attr &attr);

Json dictToJson(const AttrDict &dict) {
  Json object = Json::object();
  for (const auto &[key, value] : dict)
    object[key] = attrToJson(value);
  return object;
}

Json attrToJson(const Attr &attr) {
  return std::visit(
      [](const auto &value) -> Json {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, AttrDict>)
          return dictToJson(value);
        else
          return Json(value);
      },
      attr.value);
}

Json typedValue(const std::string &name, const TensorType &type) {
  return Json{
      {"name", name}, {"dtype", dtypeName(type.dtype)}, {"shape", type.shape}};
}

/// `{name, dtype, shape}` for each (name, value id) pair; a malformed entry
/// with fewer names than values (or the reverse) lists the common prefix.
Json typedValues(const std::vector<std::string> &names,
                 const std::vector<int> &values, const Function &body) {
  Json list = Json::array();
  size_t count = std::min(names.size(), values.size());
  for (size_t i = 0; i < count; ++i) {
    int id = values[i];
    if (id < 0 || id >= static_cast<int>(body.values.size()))
      continue;
    list.push_back(typedValue(names[i], body.values[id]));
  }
  return list;
}

Json entryToJson(const Entry &entry) {
  bool isTrain = entry.kind == Entry::Kind::Train;
  Json object;
  object["kind"] = isTrain ? "train" : "infer";
  object["name"] = entry.name;
  object["inputs"] = typedValues(entry.inputNames, entry.body.args, entry.body);
  object["outputs"] =
      typedValues(entry.outputNames, entry.body.results, entry.body);
  object["data"] = isTrain ? Json(entry.dataName) : Json(nullptr);
  object["settings"] = dictToJson(entry.settings);
  object["parameters"] = entry.usedParams;
  return object;
}

/// Scalars as nlohmann writes them; invalid UTF-8 from user files (paths,
/// names) is replaced rather than thrown on.
std::string scalarText(const Json &value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

bool isFlatArray(const Json &value) {
  return value.is_array() &&
         std::none_of(value.begin(), value.end(), [](const Json &element) {
           return element.is_structured() || element.is_string();
         });
}

/// Pretty-prints with a two-space indent like `dump(2)`, except that arrays of
/// numbers (shapes, init args, betas) stay on one line: `[2304, 768]`.
void printJson(const Json &value, unsigned depth, std::string &out) {
  if (!value.is_structured()) {
    out += scalarText(value);
    return;
  }
  bool isObject = value.is_object();
  if (value.empty()) {
    out += isObject ? "{}" : "[]";
    return;
  }
  if (isFlatArray(value)) {
    out += '[';
    for (auto it = value.begin(); it != value.end(); ++it)
      out += (it == value.begin() ? "" : ", ") + scalarText(*it);
    out += ']';
    return;
  }
  std::string indent(2 * (depth + 1), ' ');
  out += isObject ? "{\n" : "[\n";
  for (auto it = value.begin(); it != value.end(); ++it) {
    out += (it == value.begin() ? "" : ",\n") + indent;
    if (isObject)
      out += scalarText(Json(it.key())) + ": ";
    printJson(*it, depth + 1, out);
  }
  out += "\n" + std::string(2 * depth, ' ') + (isObject ? "}" : "]");
}

Json parameterToJson(const Parameter &param) {
  Json object = typedValue(param.name, param.type);
  object["count"] = param.type.numElements();
  object["init"] = Json{{"kind", param.init.kind}, {"args", param.init.args}};
  if (param.buffer)
    object["buffer"] = true;
  return object;
}

Json dataSetToJson(const DataSet &dataSet) {
  Json fields = Json::array();
  for (const DataField &field : dataSet.fields) {
    Json source{{"kind", field.source.kind}, {"path", field.source.path}};
    if (field.source.kind == "npz")
      source["key"] = field.source.key;
    source["windows"] = field.source.windows;
    if (field.source.stride > 0)
      source["stride"] = field.source.stride;
    Json object = typedValue(field.name, field.type);
    object["source"] = std::move(source);
    fields.push_back(std::move(object));
  }
  return Json{{"name", dataSet.name}, {"fields", std::move(fields)}};
}
} // namespace

std::string manifestJSON(const Program &program) {
  Json manifest;
  manifest["source"] = program.mainFile;
  manifest["source_hash"] = program.sourceHash;
  manifest["entries"] = Json::array();
  for (const Entry &entry : program.entries)
    manifest["entries"].push_back(entryToJson(entry));
  manifest["parameters"] = Json::array();
  for (const Parameter &param : program.params)
    manifest["parameters"].push_back(parameterToJson(param));
  manifest["data"] = Json::array();
  for (const DataSet &dataSet : program.dataSets)
    manifest["data"].push_back(dataSetToJson(dataSet));
  manifest["total_parameters"] = program.totalParameterCount();
  std::string text;
  printJson(manifest, 0, text);
  return text + "\n";
}

namespace {
/// 1234567 -> "1,234,567".
std::string withThousands(int64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  int sinceComma = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (sinceComma == 3 && *it != '-') {
      out.insert(out.begin(), ',');
      sinceComma = 0;
    }
    out.insert(out.begin(), *it);
    ++sinceComma;
  }
  return out;
}

std::string shapeText(const TensorType &type) {
  std::string text = "[";
  for (size_t i = 0; i < type.shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(type.shape[i]);
  return text + "]";
}
} // namespace

std::string parameterTable(const Program &program) {
  struct Row {
    std::string name, dtype, shape, count;
  };
  std::vector<Row> rows = {{"parameter", "dtype", "shape", "count"}};
  for (const Parameter &param : program.params)
    rows.push_back({param.name + (param.buffer ? " (buffer)" : ""),
                    dtypeName(param.type.dtype),
                    shapeText(param.type),
                    withThousands(param.type.numElements())});
  rows.push_back({"total", "", "",
                  withThousands(program.totalParameterCount())});
  size_t nameWidth = 0, dtypeWidth = 0, shapeWidth = 0, countWidth = 0;
  for (const Row &row : rows) {
    nameWidth = std::max(nameWidth, row.name.size());
    dtypeWidth = std::max(dtypeWidth, row.dtype.size());
    shapeWidth = std::max(shapeWidth, row.shape.size());
    countWidth = std::max(countWidth, row.count.size());
  }
  auto pad = [](const std::string &s, size_t width) {
    return s + std::string(width - s.size(), ' ');
  };
  std::string text;
  for (const Row &row : rows) {
    std::string line = pad(row.name, nameWidth) + "  " +
                       pad(row.dtype, dtypeWidth) + "  " +
                       pad(row.shape, shapeWidth) + "  " +
                       std::string(countWidth - row.count.size(), ' ') +
                       row.count;
    text += line + "\n";
  }
  return text;
}

} // namespace modelc
