// Binding data sets, outputs and hypers to arena buffers (see Bindings.h).
#include "runtime/driver/Bindings.h"

#include "runtime/io/Shape.h"

#include <fmt/format.h>

namespace modelc::rt {

namespace {

Status internal(const std::string &what) {
  return Status::error("internal error: " + what, kExitInternal);
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The source a path selects: .npy, .npz or FILE.npz:KEY by their names;
// anything else keeps an idx or raw-file source and is a raw file otherwise.
void retarget(FieldSpec::Kind &kind, std::string &key, std::string path,
              std::string &outPath, const std::string &field) {
  size_t colon = path.rfind(".npz:");
  if (colon != std::string::npos) {
    kind = FieldSpec::Kind::Npz;
    key = path.substr(colon + 5);
    path.resize(colon + 4);
  } else if (endsWith(path, ".npz")) {
    if (kind != FieldSpec::Kind::Npz)
      key = field;
    kind = FieldSpec::Kind::Npz;
  } else if (endsWith(path, ".npy")) {
    kind = FieldSpec::Kind::Npy;
  } else if (kind != FieldSpec::Kind::Idx) {
    kind = FieldSpec::Kind::File;
  }
  outPath = path;
}

} // namespace

Result<std::vector<FieldSpec>>
overrideSources(const DataSetInfo &set, const std::vector<FieldPath> &overrides,
                const std::string &flag) {
  std::vector<FieldSpec> fields = set.fields;
  for (const FieldPath &o : overrides) {
    FieldSpec *field = nullptr;
    std::string names;
    for (FieldSpec &f : fields) {
      names += (names.empty() ? "" : ", ") + f.name;
      if (f.name == o.field)
        field = &f;
    }
    if (!field)
      return Status::error(fmt::format(
          "{} {}={}: data set '{}' has no field '{}'; its fields are: {}", flag,
          o.field, o.path, set.name, o.field, names));
    if (field->kind == FieldSpec::Kind::Windows)
      retarget(field->inner, field->key, o.path, field->path, field->name);
    else
      retarget(field->kind, field->key, o.path, field->path, field->name);
  }
  return fields;
}

Result<BoundData> BoundData::open(const Manifest &manifest,
                                  const std::string &name,
                                  const std::vector<FieldPath> &overrides,
                                  const std::string &flag, Phase phase,
                                  const std::string &entry, int64_t batch) {
  const DataSetInfo *info = manifest.dataSet(name);
  if (!info)
    return internal("no data set '" + name + "' in the manifest");
  Result<std::vector<FieldSpec>> fields =
      overrideSources(*info, overrides, flag);
  if (!fields)
    return fields.status();
  Result<DataSet> set = DataSet::open(name, fields.take());
  if (!set)
    return set.status();
  BoundData bound(set.take(), batch);
  const DataSet &ds = bound.set_;
  for (const BufferInfo *b : manifest.buffersOf(Role::Input, phase, entry)) {
    size_t f = 0;
    while (f < ds.numFields() && ds.field(f).name != b->key)
      ++f;
    if (f == ds.numFields())
      return internal(fmt::format("input buffer {} has no field in data set "
                                  "'{}'",
                                  b->name, name));
    const FieldSpec &spec = ds.field(f);
    std::vector<int64_t> shape{batch};
    shape.insert(shape.end(), spec.shape.begin(), spec.shape.end());
    if (b->dtype != spec.dtype || b->shape != shape)
      return internal(fmt::format("input buffer {} is {}{}, field {} of '{}' "
                                  "makes {}{}",
                                  b->name, dtypeName(b->dtype),
                                  formatShape(b->shape), spec.name, name,
                                  dtypeName(spec.dtype), formatShape(shape)));
    bound.inputs_.push_back({f, b});
    if (spec.kind == FieldSpec::Kind::Windows)
      bound.tokensPerSample_ =
          int64_t(checkedElementCount(spec.shape).value_or(1)) - 1;
  }
  return bound;
}

void BoundData::load(const int64_t *indices, Arena &arena) const {
  for (const auto &[field, buffer] : inputs_)
    set_.gather(field, indices, batch_, arena.at(*buffer));
}

Result<std::vector<const BufferInfo *>>
scalarOutputs(const Manifest &manifest, Phase phase, const std::string &entry,
              const std::vector<std::string> &keys) {
  std::vector<const BufferInfo *> out;
  for (const std::string &key : keys) {
    const BufferInfo *b = manifest.buffer(Role::Output, phase, entry, key);
    if (!b)
      return internal(
          fmt::format("entry '{}' has no output buffer '{}'", entry, key));
    if ((b->dtype != DType::F32 && b->dtype != DType::F64) || b->bytes == 0)
      return internal("output buffer " + b->name + " is not an f32/f64 scalar");
    out.push_back(b);
  }
  return out;
}

Result<Hypers> Hypers::bind(const Manifest &manifest, const std::string &entry,
                            const RunSettings &settings) {
  Hypers h;
  h.settings_ = settings;
  for (const BufferInfo *b :
       manifest.buffersOf(Role::Hyper, Phase::Train, entry)) {
    if (b->dtype != DType::F64 || b->bytes != 8)
      return internal("hyper buffer " + b->name + " is not an f64 scalar");
    Result<double> known = hyperValue(settings, b->key, StepCounters());
    if (!known)
      return known.status();
    h.buffers_.push_back(b);
    if (b->key == "rng_counter")
      h.rngCounter_ = b;
  }
  return h;
}

void Hypers::write(const StepCounters &counters, Arena &arena) const {
  for (const BufferInfo *b : buffers_)
    arena.writeScalar(*b, *hyperValue(settings_, b->key, counters));
}

void Hypers::writeRngCounter(uint64_t counter, Arena &arena) const {
  if (rngCounter_)
    arena.writeScalar(*rngCounter_, double(counter));
}

} // namespace modelc::rt
