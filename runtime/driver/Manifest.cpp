// Verifies the embedded manifest and copies it into the plain structs of
// Manifest.h, checking every offset, size and index the driver will trust.
#include "runtime/driver/Manifest.h"

#include "runtime/io/Shape.h"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace modelc::rt {

namespace fb = modelc::manifest;

namespace {

Status corrupt(const std::string &what) {
  return Status::error("internal error: the program's manifest is corrupt (" +
                           what + "); rebuild it with modelc",
                       kExitInternal);
}

std::string str(const flatbuffers::String *s) { return s ? s->str() : ""; }

std::vector<std::string> strings(
    const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>> *v) {
  std::vector<std::string> out;
  if (v)
    for (const flatbuffers::String *s : *v)
      out.push_back(str(s));
  return out;
}

/// The elements of a scalar vector, copied bytewise: the flatbuffers
/// verifier does not check that an 8-byte vector's data is 8-aligned, so a
/// corrupt manifest could make element reads misaligned (fuzz-manifest).
template <typename T> std::vector<T> values(const flatbuffers::Vector<T> *v) {
  static_assert(std::is_scalar_v<T>, "scalar vectors only");
  std::vector<T> out(v ? v->size() : 0);
  if (!out.empty())
    std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
  return out;
}

template <typename E> bool inRange(E e, E lo, E hi) {
  return !flatbuffers::IsOutRange(e, lo, hi);
}

Result<DType> dtypeOf(fb::DType d, const std::string &what) {
  if (!inRange(d, fb::DType::MIN, fb::DType::MAX))
    return corrupt("unknown dtype of " + what);
  return static_cast<DType>(static_cast<int>(d));
}

// The manifest's SourceKind and the runtime's FieldSpec::Kind are both
// schema/DataSources.def's list, in its order.
#define MODELC_DATA_SOURCE(KIND, NAME, ARGS)                                   \
  static_assert(int(fb::SourceKind::KIND) == int(FieldSpec::Kind::KIND),      \
                "schema/manifest.fbs SourceKind is out of DataSources.def's "   \
                "order");
#include "schema/DataSources.def"

/// A kind the caller has range-checked.
FieldSpec::Kind kindOf(fb::SourceKind k) {
  return static_cast<FieldSpec::Kind>(static_cast<int>(k));
}

std::vector<ValueCheck> checksOf(
    const flatbuffers::Vector<flatbuffers::Offset<fb::ValueCheck>> *v) {
  std::vector<ValueCheck> out;
  if (v)
    for (const fb::ValueCheck *c : *v) {
      ValueCheck check;
      check.input = c->input();
      check.starts = values(c->starts());
      check.limits = values(c->limits());
      check.strides = values(c->strides());
      check.min = c->min();
      check.end = c->end();
      if (c->has_ignore())
        check.ignore = c->ignore();
      check.use = str(c->use());
      out.push_back(std::move(check));
    }
  return out;
}

Status copyBuffers(const fb::Program &p, Manifest &m) {
  if (!p.buffers())
    return Status();
  for (const fb::Buffer *b : *p.buffers()) {
    BufferInfo info;
    info.name = str(b->name());
    if (!inRange(b->role(), fb::Role::MIN, fb::Role::MAX) ||
        !inRange(b->phase(), fb::Phase::MIN, fb::Phase::MAX))
      return corrupt("buffer " + info.name + " has an unknown role or phase");
    info.role = b->role();
    info.phase = b->phase();
    info.entry = str(b->entry());
    info.key = str(b->key());
    Result<DType> dtype = dtypeOf(b->dtype(), "buffer " + info.name);
    if (!dtype)
      return dtype.status();
    info.dtype = *dtype;
    info.shape = values(b->shape());
    info.offset = b->offset();
    info.bytes = b->bytes();
    std::optional<uint64_t> bytes = checkedByteSize(info.shape, info.dtype);
    if (!bytes || *bytes != info.bytes)
      return corrupt("buffer " + info.name + " has " +
                     std::to_string(info.bytes) + " bytes for shape " +
                     formatShape(info.shape));
    if (info.offset % 64 != 0 || info.offset > m.arenaBytes ||
        info.bytes > m.arenaBytes - info.offset)
      return corrupt("buffer " + info.name + " lies outside the arena");
    m.buffers.push_back(std::move(info));
  }
  return Status();
}

Status copyParams(const fb::Program &p, Manifest &m) {
  if (!p.params())
    return Status();
  for (const fb::Param *q : *p.params()) {
    ParamInfo info;
    info.name = str(q->name());
    Result<DType> dtype = dtypeOf(q->dtype(), "parameter " + info.name);
    if (!dtype)
      return dtype.status();
    info.dtype = *dtype;
    info.shape = values(q->shape());
    if (!inRange(q->init(), fb::InitKind::MIN, fb::InitKind::MAX))
      return corrupt("parameter " + info.name + " has an unknown initialiser");
    info.init = q->init();
    info.initArgs = values(q->init_args());
    info.buffer = q->buffer();
    if (info.buffer >= m.buffers.size())
      return corrupt("parameter " + info.name + " has no buffer");
    const BufferInfo &b = m.buffers[info.buffer];
    info.trainable = b.role == Role::Param;
    if ((b.role != Role::Param && b.role != Role::ModuleBuffer) ||
        b.dtype != info.dtype || b.shape != info.shape)
      return corrupt("parameter " + info.name + " and its buffer " + b.name +
                     " disagree");
    if (q->grad_buffer() >= 0) {
      info.gradBuffer = size_t(q->grad_buffer());
      if (*info.gradBuffer >= m.buffers.size())
        return corrupt("parameter " + info.name + " has no gradient buffer");
      const BufferInfo &g = m.buffers[*info.gradBuffer];
      if (g.role != Role::Grad || g.dtype != info.dtype ||
          g.shape != info.shape)
        return corrupt("parameter " + info.name + " and its gradient buffer " +
                       g.name + " disagree");
    }
    m.params.push_back(std::move(info));
  }
  return Status();
}

Status copyDataSets(const fb::Program &p, Manifest &m) {
  if (!p.datasets())
    return Status();
  for (const fb::DataSet *d : *p.datasets()) {
    DataSetInfo set;
    set.name = str(d->name());
    if (d->fields())
      for (const fb::Field *f : *d->fields()) {
        FieldSpec spec;
        spec.name = str(f->name());
        Result<DType> dtype = dtypeOf(f->dtype(), "field " + spec.name);
        if (!dtype)
          return dtype.status();
        spec.dtype = *dtype;
        spec.shape = values(f->shape());
        if (!inRange(f->source(), fb::SourceKind::MIN, fb::SourceKind::MAX) ||
            !inRange(f->inner(), fb::SourceKind::MIN, fb::SourceKind::MAX))
          return corrupt("field " + spec.name + " has an unknown source");
        spec.kind = kindOf(f->source());
        spec.inner = kindOf(f->inner());
        if (f->window_stride() < 0)
          return corrupt("field " + spec.name + " has a negative window "
                         "stride");
        spec.windowStride = f->window_stride();
        spec.path = str(f->path());
        spec.key = str(f->key());
        spec.checks = checksOf(f->checks());
        for (const ValueCheck &check : spec.checks)
          if (!check.fits(spec.shape))
            return corrupt("a value check of field " + spec.name +
                           " does not fit its shape");
        set.fields.push_back(std::move(spec));
      }
    m.datasets.push_back(std::move(set));
  }
  return Status();
}

Status copyFunctions(const fb::Program &p, Manifest &m, const modelc_fn *table,
                     size_t tableSize) {
  if (!p.functions())
    return Status();
  for (const fb::Function *f : *p.functions()) {
    FunctionInfo info;
    info.symbol = str(f->symbol());
    if (!inRange(f->kind(), fb::FunctionKind::MIN, fb::FunctionKind::MAX))
      return corrupt("function " + info.symbol + " has an unknown kind");
    info.kind = f->kind();
    info.entry = str(f->entry());
    if (f->window())
      info.window.assign(f->window()->begin(), f->window()->end());
    if (f->index() >= tableSize || !table[f->index()])
      return corrupt("function " + info.symbol + " is not in the table");
    info.fn = table[f->index()];
    m.functions.push_back(std::move(info));
  }
  return Status();
}

Status copyEntries(const fb::Program &p, Manifest &m) {
  if (p.train())
    for (const fb::TrainEntry *t : *p.train()) {
      TrainInfo e;
      e.name = str(t->name());
      e.data = str(t->data());
      e.batch = t->batch();
      e.accumulate = t->accumulate();
      e.epochs = t->epochs();
      e.steps = t->steps();
      e.seed = t->seed();
      e.shuffle = t->shuffle();
      e.precision = str(t->precision());
      if (const fb::Optimizer *o = t->optimizer()) {
        e.optimizer.kind = str(o->kind());
#define MODELC_OPTIMIZER_HYPER(KEY, ...) e.optimizer.hypers.KEY = o->KEY();
#define MODELC_OPTIMIZER_FLAG(KEY) e.optimizer.KEY = o->KEY();
#include "schema/Optimizers.def"
      }
      if (const fb::Schedule *s = t->schedule())
        e.schedule = {str(s->kind()), s->warmup(), s->min_lr(), s->every(),
                      s->gamma()};
      e.gradClip = t->grad_clip();
      e.hasGradClip = t->has_grad_clip();
      e.evalData = str(t->eval_data());
      e.evalEvery = t->eval_every();
      e.evalSteps = t->eval_steps();
      e.checkpointEvery = t->checkpoint_every();
      e.checkpointDir = str(t->checkpoint_dir());
      e.checkpointKeep = t->checkpoint_keep();
      e.logEvery = t->log_every();
      e.outputs = strings(t->outputs());
      if (const auto *buckets = t->gradient_buckets())
        e.gradientBuckets.assign(buckets->begin(), buckets->end());
      e.bucketMb = t->bucket_mb();
      if (t->zero() != 0 && t->zero() != 1)
        return corrupt("train entry " + e.name + " has zero = " +
                       std::to_string(t->zero()));
      e.zero = t->zero() == 1;
      e.zeroParams = strings(t->zero_params());
      if (const fb::GradScaler *g = t->grad_scaler()) {
        e.gradScaler = GradScalerInfo{g->init_scale(), g->growth_factor(),
                                      g->backoff_factor(),
                                      g->growth_interval()};
        if (!(e.gradScaler->initScale > 0 &&
              e.gradScaler->initScale <= FLT_MAX &&
              e.gradScaler->growthFactor > 1 &&
              std::isfinite(e.gradScaler->growthFactor) &&
              e.gradScaler->backoffFactor > 0 &&
              e.gradScaler->backoffFactor < 1 &&
              e.gradScaler->growthInterval >= 1))
          return corrupt("train entry " + e.name +
                         " has invalid grad_scaler settings");
      }
      if ((e.precision == "f16") != e.gradScaler.has_value())
        return corrupt("train entry " + e.name +
                       (e.gradScaler ? " has grad_scaler settings but is not f16"
                                     : " is f16 without grad_scaler settings"));
      if (e.batch < 1 || e.accumulate < 1 || e.logEvery < 1 || e.seed < 0 ||
          e.epochs < 0 || e.steps < 0 || e.evalEvery < 0 || e.evalSteps < 0 ||
          e.checkpointEvery < 0 || e.checkpointKeep < 0)
        return corrupt("train entry " + e.name + " has invalid settings");
      if (!m.dataSet(e.data) || (!e.evalData.empty() && !m.dataSet(e.evalData)))
        return corrupt("train entry " + e.name + " names an unknown data set");
      m.train.push_back(std::move(e));
    }
  if (p.infer())
    for (const fb::InferEntry *i : *p.infer()) {
      InferInfo e{str(i->name()), i->batch(), strings(i->inputs()),
                  strings(i->outputs()), checksOf(i->checks())};
      if (e.batch < 1)
        return corrupt("infer entry " + e.name + " has no batch");
      for (const ValueCheck &check : e.checks) {
        const BufferInfo *b =
            check.input < e.inputs.size()
                ? m.buffer(Role::Input, Phase::Infer, e.name,
                           e.inputs[check.input])
                : nullptr;
        if (!b || b->shape.empty() ||
            !check.fits({b->shape.begin() + 1, b->shape.end()}))
          return corrupt("a value check of infer entry " + e.name +
                         " does not fit an input");
      }
      m.infer.push_back(std::move(e));
    }
  return Status();
}

/// ZeRO-1's parts agree (docs/runtime/zero.md): a zero entry names
/// parameters it updates and has, for each of their element types, one
/// UpdateChunk function whose window is a parameter chunk, a gradient
/// chunk and the state kinds, all 1-D of one size and type; nothing else
/// has a window.
Status checkZero(const Manifest &m) {
  for (const FunctionInfo &f : m.functions) {
    const TrainInfo *t = nullptr;
    for (const TrainInfo &e : m.train)
      if (e.name == f.entry)
        t = &e;
    bool chunk = f.kind == FunctionKind::UpdateChunk;
    bool ok = chunk == !f.window.empty() && (!chunk || (t && t->zero)) &&
              std::all_of(f.window.begin(), f.window.end(),
                          [&](size_t i) { return i < m.buffers.size(); });
    for (size_t i = 0; ok && i < f.window.size(); ++i) {
      const BufferInfo &b = m.buffers[f.window[i]];
      const BufferInfo &first = m.buffers[f.window[0]];
      ok = b.role == Role::Window && b.entry == f.entry &&
           b.shape.size() == 1 && b.shape == first.shape &&
           b.dtype == first.dtype &&
           (i > 1 || b.key == (i == 0 ? "param" : "grad"));
    }
    if (!ok || (chunk && f.window.size() < 2))
      return corrupt("function " + f.symbol + " is not a ZeRO-1 chunk update "
                     "of a zero = 1 entry with a window");
  }
  for (const TrainInfo &t : m.train) {
    if (!t.zero && !t.zeroParams.empty())
      return corrupt("train entry " + t.name + " is not zero = 1 but names "
                     "ZeRO-1 parameters");
    for (const std::string &name : t.zeroParams) {
      const ParamInfo *p = nullptr;
      for (const ParamInfo &q : m.params)
        if (q.name == name)
          p = &q;
      bool stepped = p && p->gradBuffer &&
                     std::any_of(m.functions.begin(), m.functions.end(),
                                 [&](const FunctionInfo &f) {
                                   return f.kind == FunctionKind::UpdateChunk &&
                                          f.entry == t.name &&
                                          m.buffers[f.window[0]].dtype ==
                                              p->dtype;
                                 });
      if (!stepped)
        return corrupt("train entry " + t.name + " names " + name +
                       ", which is no parameter with a gradient and a ZeRO-1 "
                       "chunk update of its type");
    }
  }
  return Status();
}

} // namespace

Result<Manifest> Manifest::load(const uint8_t *data, size_t size,
                                const modelc_fn *table, size_t tableSize) {
  // The verifier checks alignment, and nothing promises that the object
  // file's array is aligned: verify and read an aligned copy.
  auto aligned = std::make_shared<std::vector<uint64_t>>((size + 7) / 8);
  if (size)
    std::memcpy(aligned->data(), data, size);
  const auto *bytes = reinterpret_cast<const uint8_t *>(aligned->data());
  flatbuffers::Verifier verifier(bytes, size);
  if (!size || !fb::VerifyProgramBuffer(verifier))
    return corrupt("the flatbuffer does not verify");
  const fb::Program &p = *fb::GetProgram(bytes);
  if (p.version() != 1)
    return corrupt(
        fmt::format("version {}, this runtime reads version 1", p.version()));
  Manifest m;
  m.version = p.version();
  m.sourceName = str(p.source_name());
  m.sourceHash = str(p.source_hash());
  m.targets = strings(p.targets());
  m.arenaBytes = p.arena_bytes();
  m.persistentBytes = p.persistent_bytes();
  if (const fb::ScratchPeak *peak = p.scratch_peak()) {
    ScratchPeak sp{str(peak->function()), peak->live_bytes(), {}};
    if (peak->dtypes())
      for (const fb::DTypeBytes *d : *peak->dtypes()) {
        Result<DType> dtype = dtypeOf(d->dtype(), "the scratch peak");
        if (!dtype)
          return dtype.status();
        sp.byDtype.push_back({*dtype, d->bytes()});
      }
    if (sp.liveBytes > m.arenaBytes - std::min(m.persistentBytes, m.arenaBytes))
      return corrupt("the scratch peak is larger than the scratch region");
    m.scratchPeak = std::move(sp);
  }
  MODELC_RETURN_IF_ERROR(copyBuffers(p, m));
  MODELC_RETURN_IF_ERROR(copyParams(p, m));
  MODELC_RETURN_IF_ERROR(copyDataSets(p, m));
  MODELC_RETURN_IF_ERROR(copyFunctions(p, m, table, tableSize));
  MODELC_RETURN_IF_ERROR(copyEntries(p, m));
  MODELC_RETURN_IF_ERROR(checkZero(m));
  m.flatbuffer = std::move(aligned);
  return m;
}

const fb::GpuProgram *Manifest::gpuProgram() const {
  if (!flatbuffer)
    return nullptr;
  return fb::GetProgram(flatbuffer->data())->gpu();
}

namespace {
template <typename Entry>
Result<const Entry *> findEntry(const std::vector<Entry> &entries,
                                const std::string &name, const char *kind) {
  if (name.empty() && !entries.empty())
    return &entries.front();
  std::string names;
  for (const Entry &e : entries) {
    if (e.name == name)
      return &e;
    names += (names.empty() ? "" : ", ") + e.name;
  }
  if (entries.empty())
    return Status::error(fmt::format("this program has no {} entry", kind));
  return Status::error(fmt::format("no {} entry named '{}'; the {} entries "
                                   "are: {}",
                                   kind, name, kind, names));
}
} // namespace

Result<const TrainInfo *> Manifest::trainEntry(const std::string &name) const {
  return findEntry(train, name, "train");
}

Result<const InferInfo *> Manifest::inferEntry(const std::string &name) const {
  return findEntry(infer, name, "infer");
}

const DataSetInfo *Manifest::dataSet(const std::string &name) const {
  for (const DataSetInfo &d : datasets)
    if (d.name == name)
      return &d;
  return nullptr;
}

const BufferInfo *Manifest::buffer(Role role, Phase phase,
                                   const std::string &entry,
                                   const std::string &key) const {
  for (const BufferInfo &b : buffers)
    if (b.role == role && b.phase == phase && b.entry == entry && b.key == key)
      return &b;
  return nullptr;
}

std::vector<const BufferInfo *>
Manifest::buffersOf(Role role, Phase phase, const std::string &entry) const {
  std::vector<const BufferInfo *> out;
  for (const BufferInfo &b : buffers)
    if (b.role == role && b.phase == phase && b.entry == entry)
      out.push_back(&b);
  return out;
}

modelc_fn Manifest::function(FunctionKind kind,
                             const std::string &entry) const {
  for (const FunctionInfo &f : functions)
    if (f.kind == kind && f.entry == entry)
      return f.fn;
  return nullptr;
}

bool Manifest::hasTarget(const std::string &target) const {
  return std::find(targets.begin(), targets.end(), target) != targets.end();
}

int64_t Manifest::parameterCount() const {
  int64_t total = 0;
  for (const ParamInfo &p : params)
    if (p.trainable) // as PyTorch counts model.parameters()
      total += int64_t(checkedElementCount(p.shape).value_or(0));
  return total;
}

const char *roleName(Role role) { return fb::EnumNameRole(role); }

} // namespace modelc::rt
