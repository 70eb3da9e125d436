// Reading and writing .npy files: the magic, the version, and the header, a
// Python dict literal such as {'descr': '<f4', 'fortran_order': False,
// 'shape': (3, 4), } parsed by a small strict parser.
#include "runtime/io/Npy.h"

#include "runtime/io/Files.h"
#include "runtime/io/Shape.h"

#include <cstring>
#include <fmt/format.h>
#include <map>

namespace modelc::rt {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

struct DescrName {
  const char *descr;
  DType dtype;
};

/// What numpy writes for each dtype ('|' marks byte order irrelevant).
constexpr DescrName kDescrs[] = {{"<f4", DType::F32}, {"<f8", DType::F64},
                                 {"<f2", DType::F16}, {"<i4", DType::I32},
                                 {"<i8", DType::I64}, {"|u1", DType::U8},
                                 {"<u2", DType::U16}, {"|b1", DType::Bool}};

/// A value of the header dict: a string, a bool or a tuple of integers.
struct HeaderValue {
  enum class Kind { String, Bool, Tuple } kind;
  std::string text;
  bool flag = false;
  std::vector<int64_t> ints;
};

/// Parses the Python literal subset numpy writes; `error` says what failed.
class HeaderParser {
public:
  /// `base` is the file offset of the text, for messages.
  HeaderParser(std::string_view text, size_t base) : text_(text), base_(base) {}

  bool parseDict(std::map<std::string, HeaderValue> &dict) {
    if (!expect('{'))
      return false;
    while (true) {
      skipSpace();
      if (peek() == '}') {
        ++pos_;
        break;
      }
      std::string key;
      HeaderValue value;
      if (!parseString(key) || !expect(':') || !parseValue(value))
        return false;
      if (!dict.emplace(key, std::move(value)).second)
        return fail(fmt::format("duplicate key '{}'", key));
      skipSpace();
      if (peek() == ',')
        ++pos_;
      else if (peek() != '}')
        return fail("expected ',' or '}'");
    }
    skipSpace();
    if (pos_ != text_.size())
      return fail("unexpected text after the dict");
    return true;
  }

  const std::string &error() const { return error_; }

private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t'))
      ++pos_;
  }
  bool fail(std::string message) {
    error_ = fmt::format("{} at byte {}", message, base_ + pos_);
    return false;
  }
  bool expect(char c) {
    skipSpace();
    if (peek() != c)
      return fail(fmt::format("expected '{}'", c));
    ++pos_;
    return true;
  }
  bool parseString(std::string &out) {
    skipSpace();
    char quote = peek();
    if (quote != '\'' && quote != '"')
      return fail("expected a string");
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos)
      return fail("unterminated string");
    out = std::string(text_.substr(pos_ + 1, end - pos_ - 1));
    if (out.find('\\') != std::string::npos)
      return fail("escapes in strings are not supported");
    pos_ = end + 1;
    return true;
  }
  bool parseWord(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word)
      return false;
    pos_ += word.size();
    return true;
  }
  bool parseInt(int64_t &out) {
    size_t start = pos_;
    out = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (pos_ - start >= 18)
        return fail("integer too large");
      out = out * 10 + (text_[pos_++] - '0');
    }
    if (pos_ == start)
      return fail("expected a non-negative integer");
    if (peek() == 'L') // Python 2's long literal
      ++pos_;
    return true;
  }
  bool parseValue(HeaderValue &value) {
    skipSpace();
    char c = peek();
    if (c == '\'' || c == '"') {
      value.kind = HeaderValue::Kind::String;
      return parseString(value.text);
    }
    value.kind = HeaderValue::Kind::Bool;
    if (parseWord("True")) {
      value.flag = true;
      return true;
    }
    if (parseWord("False"))
      return true;
    if (c != '(')
      return fail("expected a string, True, False or a tuple");
    value.kind = HeaderValue::Kind::Tuple;
    ++pos_;
    bool comma = false; // after the last element
    while (true) {
      skipSpace();
      if (peek() == ')') {
        // Python reads "(3)" as the int 3: a 1-tuple needs its comma.
        if (value.ints.size() == 1 && !comma)
          return fail("a shape of one dimension is written '(N,)'");
        ++pos_;
        return true;
      }
      int64_t dim;
      if (!parseInt(dim))
        return false;
      value.ints.push_back(dim);
      skipSpace();
      comma = peek() == ',';
      if (comma)
        ++pos_;
      else if (peek() != ')')
        return fail("expected ',' or ')'");
    }
  }

  std::string_view text_;
  size_t base_;
  size_t pos_ = 0;
  std::string error_;
};

Result<DType> dtypeFromDescr(const std::string &descr,
                             const std::string &name) {
  for (const DescrName &entry : kDescrs) {
    // One-byte types carry no byte order; accept any marker for them.
    bool oneByte = entry.descr[0] == '|';
    if (descr == entry.descr ||
        (oneByte && descr.size() == 3 && descr.substr(1) == entry.descr + 1 &&
         (descr[0] == '<' || descr[0] == '>' || descr[0] == '=')))
      return entry.dtype;
  }
  if (!descr.empty() && descr[0] == '>')
    return Status::error(fmt::format(
        "{}: big-endian dtype '{}' is not supported (use '<')", name, descr));
  return Status::error(fmt::format("{}: unsupported dtype '{}'", name, descr));
}

uint32_t readLittleEndian(const uint8_t *bytes, size_t size) {
  uint32_t value = 0;
  for (size_t i = 0; i < size; ++i)
    value |= uint32_t(bytes[i]) << (8 * i);
  return value;
}

} // namespace

Result<NpyHeader> parseNpyHeaderPrefix(const uint8_t *data, size_t size,
                                       uint64_t totalSize,
                                       const std::string &name) {
  if (size > 0 && std::memcmp(data, kMagic, std::min(size, kMagicSize)) != 0)
    return Status::error(fmt::format(
        "{}: not a .npy file (wrong magic number: a .npy starts with "
        "\\x93NUMPY)",
        name));
  if (size < 10)
    return Status::error(fmt::format(
        "{}: truncated: {} bytes, too short for a .npy header", name, size));
  uint8_t major = data[6], minor = data[7];
  if (major < 1 || major > 3 || minor != 0)
    return Status::error(fmt::format(
        "{}: unsupported .npy version {}.{} (bytes 6-7; numpy writes 1.0, 2.0 "
        "and 3.0)",
        name, major, minor));
  size_t lengthSize = major == 1 ? 2 : 4;
  if (size < 8 + lengthSize)
    return Status::error(fmt::format(
        "{}: truncated: {} bytes, too short for a .npy header", name, size));
  uint32_t headerSize = readLittleEndian(data + 8, lengthSize);
  size_t headerStart = 8 + lengthSize;
  if (headerSize > kMaxNpyHeaderBytes)
    return Status::error(fmt::format(
        "{}: header length {} (bytes 8-{}) exceeds the limit of {} bytes", name,
        headerSize, headerStart - 1, kMaxNpyHeaderBytes));
  if (headerSize > totalSize - headerStart)
    return Status::error(fmt::format(
        "{}: truncated: header length {} exceeds the file size ({} bytes)",
        name, headerSize, totalSize));
  if (headerSize > size - headerStart)
    return Status::error(fmt::format(
        "{}: truncated: the header ends at byte {}, only {} bytes are present",
        name, headerStart + headerSize, size));

  std::map<std::string, HeaderValue> dict;
  HeaderParser parser(
      std::string_view(reinterpret_cast<const char *>(data + headerStart),
                       headerSize),
      headerStart);
  if (!parser.parseDict(dict))
    return Status::error(
        fmt::format("{}: malformed header: {}", name, parser.error()));
  using Kind = HeaderValue::Kind;
  const std::pair<const char *, Kind> expected[] = {
      {"descr", Kind::String},
      {"fortran_order", Kind::Bool},
      {"shape", Kind::Tuple}};
  for (const auto &[key, kind] : expected) {
    auto it = dict.find(key);
    if (it == dict.end() || it->second.kind != kind)
      return Status::error(fmt::format(
          "{}: malformed header: '{}' is missing or of the wrong type", name,
          key));
  }
  if (dict.size() != 3)
    return Status::error(fmt::format(
        "{}: malformed header: keys other than 'descr', 'fortran_order' and "
        "'shape'",
        name));
  if (dict["fortran_order"].flag)
    return Status::error(fmt::format(
        "{}: fortran_order arrays are not supported (save a C-order array, "
        "e.g. numpy.ascontiguousarray)",
        name));

  NpyHeader header;
  header.descr = dict["descr"].text;
  Result<DType> dtype = dtypeFromDescr(header.descr, name);
  if (!dtype)
    return dtype.status();
  header.dtype = *dtype;
  header.shape = dict["shape"].ints;
  header.dataOffset = headerStart + headerSize;
  std::optional<uint64_t> bytes = checkedByteSize(header.shape, header.dtype);
  if (!bytes)
    return Status::error(fmt::format("{}: shape {} is too large", name,
                                     formatShape(header.shape)));
  header.dataBytes = *bytes;
  uint64_t available = totalSize - header.dataOffset;
  if (available < header.dataBytes)
    return Status::error(fmt::format(
        "{}: truncated: shape {} of {} needs {} bytes of data, file has {} "
        "(from byte {})",
        name, formatShape(header.shape), header.descr, header.dataBytes,
        available, header.dataOffset));
  if (available > header.dataBytes)
    return Status::error(fmt::format(
        "{}: {} unexpected bytes after the array data (from byte {}; shape {} "
        "of {} is {} bytes)",
        name, available - header.dataBytes,
        header.dataOffset + header.dataBytes, formatShape(header.shape),
        header.descr, header.dataBytes));
  return header;
}

Result<NpyHeader> parseNpyHeader(const uint8_t *data, size_t size,
                                 const std::string &name) {
  return parseNpyHeaderPrefix(data, size, size, name);
}

Result<NpyArray> parseNpy(const uint8_t *data, size_t size,
                          const std::string &name) {
  Result<NpyHeader> header = parseNpyHeader(data, size, name);
  if (!header)
    return header.status();
  const uint8_t *begin = data + header->dataOffset;
  return NpyArray{header->dtype, header->shape,
                  std::vector<uint8_t>(begin, begin + header->dataBytes)};
}

Result<NpyArray> readNpy(const std::string &path) {
  Result<std::shared_ptr<const Blob>> blob = mapFile(path);
  if (!blob)
    return blob.status();
  return parseNpy((*blob)->data(), (*blob)->size(), path);
}

Result<std::string> npyDescr(DType dtype) {
  for (const DescrName &entry : kDescrs)
    if (entry.dtype == dtype)
      return std::string(entry.descr);
  return Status::error(
      fmt::format("{} arrays cannot be stored in .npy files (numpy has no {})",
                  dtypeName(dtype), dtypeName(dtype)),
      kExitUsage);
}

Result<std::string> encodeNpyHeader(DType dtype,
                                    const std::vector<int64_t> &shape) {
  Result<std::string> descr = npyDescr(dtype);
  if (!descr)
    return descr.status();
  if (!checkedByteSize(shape, dtype))
    return Status::error(
        fmt::format("shape {} is too large", formatShape(shape)),
        kExitInternal);
  // Python's repr of a tuple: "()", "(3,)", "(3, 4)".
  std::string tuple = shape.size() == 1
                          ? fmt::format("({},)", shape[0])
                          : fmt::format("({})", fmt::join(shape, ", "));
  std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                  *descr, tuple);
  // Version 1.0 stores the header length in 16 bits; longer needs 2.0.
  bool version2 = dict.size() + 1 + 10 + 64 > 65535;
  size_t prefix = version2 ? 12 : 10;
  size_t padding = (64 - (prefix + dict.size() + 1) % 64) % 64;
  dict.append(padding, ' ');
  dict.push_back('\n');
  std::string out(kMagic, kMagicSize);
  out.push_back(char(version2 ? 2 : 1));
  out.push_back(0);
  for (size_t i = 0; i < prefix - 8; ++i)
    out.push_back(char((dict.size() >> (8 * i)) & 0xff));
  return out + dict;
}

Status writeNpy(const std::string &path, DType dtype,
                const std::vector<int64_t> &shape, const void *data) {
  Result<std::string> header = encodeNpyHeader(dtype, shape);
  if (!header)
    return Status::error(fmt::format("{}: {}", path, header.status().message()),
                         header.status().exitCode());
  Result<AtomicFile> file = AtomicFile::create(path);
  if (!file)
    return file.status();
  MODELC_RETURN_IF_ERROR(file->write(header->data(), header->size()));
  MODELC_RETURN_IF_ERROR(file->write(data, *checkedByteSize(shape, dtype)));
  return file->commit();
}

} // namespace modelc::rt
