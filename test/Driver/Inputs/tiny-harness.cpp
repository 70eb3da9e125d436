// A stand-in for the runtime: links with the object file modelc makes from
// tiny-linalg.mlir, prints its manifest (checked with FileCheck), runs its
// functions on an arena and compares the results with values computed here
// in double precision (tolerance 1e-5, relative to 1).
#include "manifest_generated.h"
#include <modelc/ProgramABI.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace fb = modelc::manifest;

// The runtime's GEMM contract (ProgramABI.h), naively, so that the test
// needs no BLAS.
template <typename T>
void naiveGemm(int64_t transA, int64_t transB, int64_t M, int64_t N, int64_t K,
               T alpha, const T *A, int64_t lda, int64_t strideA, const T *B,
               int64_t ldb, int64_t strideB, T beta, T *C, int64_t ldc,
               int64_t strideC, int64_t batch) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        T sum = 0;
        for (int64_t k = 0; k < K; ++k) {
          T a = transA ? A[b * strideA + k * lda + i]
                       : A[b * strideA + i * lda + k];
          T x = transB ? B[b * strideB + j * ldb + k]
                       : B[b * strideB + k * ldb + j];
          sum += a * x;
        }
        T &c = C[b * strideC + i * ldc + j];
        c = alpha * sum + (beta == 0 ? 0 : beta * c);
      }
}

extern "C" void modelc_gemm_f32(int64_t tA, int64_t tB, int64_t M, int64_t N,
                                int64_t K, float alpha, const float *A,
                                int64_t lda, int64_t sA, const float *B,
                                int64_t ldb, int64_t sB, float beta, float *C,
                                int64_t ldc, int64_t sC, int64_t batch) {
  naiveGemm(tA, tB, M, N, K, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC,
            batch);
}

extern "C" void modelc_gemm_f64(int64_t tA, int64_t tB, int64_t M, int64_t N,
                                int64_t K, double alpha, const double *A,
                                int64_t lda, int64_t sA, const double *B,
                                int64_t ldb, int64_t sB, double beta, double *C,
                                int64_t ldc, int64_t sC, int64_t batch) {
  naiveGemm(tA, tB, M, N, K, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC,
            batch);
}

namespace {

const fb::Program *program;
uint8_t *arena;
bool failed = false;

std::string shape(const flatbuffers::Vector<int64_t> *dims) {
  std::string text = "[";
  for (unsigned i = 0; dims && i < dims->size(); ++i)
    text += (i ? "," : "") + std::to_string(dims->Get(i));
  return text + "]";
}

void printManifest() {
  const fb::Program &p = *program;
  std::printf("program version=%u source=%s hash=%s target=%s arena=%llu "
              "persistent=%llu\n",
              p.version(), p.source_name()->c_str(), p.source_hash()->c_str(),
              p.targets()->Get(0)->c_str(), (unsigned long long)p.arena_bytes(),
              (unsigned long long)p.persistent_bytes());
  for (const fb::Buffer *b : *p.buffers())
    std::printf("buffer %s role=%s phase=%s entry=%s key=%s dtype=%s shape=%s "
                "offset=%llu bytes=%llu\n",
                b->name()->c_str(), fb::EnumNameRole(b->role()),
                fb::EnumNamePhase(b->phase()), b->entry()->c_str(),
                b->key()->c_str(), fb::EnumNameDType(b->dtype()),
                shape(b->shape()).c_str(), (unsigned long long)b->offset(),
                (unsigned long long)b->bytes());
  for (const fb::Param *q : *p.params())
    std::printf("param %s dtype=%s shape=%s init=%s args=%zu buffer=%u "
                "grad=%d\n",
                q->name()->c_str(), fb::EnumNameDType(q->dtype()),
                shape(q->shape()).c_str(), fb::EnumNameInitKind(q->init()),
                (size_t)q->init_args()->size(), q->buffer(), q->grad_buffer());
  for (const fb::DataSet *d : *p.datasets())
    for (const fb::Field *f : *d->fields())
      std::printf("field %s.%s dtype=%s shape=%s source=%s inner=%s path=%s\n",
                  d->name()->c_str(), f->name()->c_str(),
                  fb::EnumNameDType(f->dtype()), shape(f->shape()).c_str(),
                  fb::EnumNameSourceKind(f->source()),
                  fb::EnumNameSourceKind(f->inner()), f->path()->c_str());
  for (const fb::TrainEntry *t : *p.train()) {
    const fb::Optimizer *o = t->optimizer();
    const fb::Schedule *s = t->schedule();
    std::printf("train %s data=%s batch=%lld accumulate=%lld steps=%lld "
                "epochs=%lld seed=%lld shuffle=%d precision=%s log=%lld "
                "outputs=%s\n",
                t->name()->c_str(), t->data()->c_str(), (long long)t->batch(),
                (long long)t->accumulate(), (long long)t->steps(),
                (long long)t->epochs(), (long long)t->seed(), t->shuffle(),
                t->precision()->c_str(), (long long)t->log_every(),
                t->outputs()->Get(0)->c_str());
    std::printf("optimizer %s lr=%g momentum=%g nesterov=%d beta1=%g "
                "beta2=%g eps=%g clip=%g/%d\n",
                o->kind()->c_str(), o->lr(), o->momentum(), o->nesterov(),
                o->beta1(), o->beta2(), o->eps(), t->grad_clip(),
                t->has_grad_clip());
    std::printf("schedule %s every=%lld gamma=%g eval=\"%s\" checkpoint=%lld\n",
                s->kind()->c_str(), (long long)s->every(), s->gamma(),
                t->eval_data()->c_str(), (long long)t->checkpoint_every());
  }
  for (const fb::InferEntry *i : *p.infer())
    std::printf("infer %s batch=%lld input=%s output=%s\n", i->name()->c_str(),
                (long long)i->batch(), i->inputs()->Get(0)->c_str(),
                i->outputs()->Get(0)->c_str());
  std::printf("functions %llu\n", (unsigned long long)modelc_num_functions);
  for (const fb::Function *f : *p.functions())
    std::printf("function %u %s kind=%s entry=%s\n", f->index(),
                f->symbol()->c_str(), fb::EnumNameFunctionKind(f->kind()),
                f->entry()->c_str());
}

float *tensor(const char *name) {
  for (const fb::Buffer *b : *program->buffers())
    if (b->name()->str() == name)
      return reinterpret_cast<float *>(arena + b->offset());
  std::printf("no buffer %s\n", name);
  std::exit(1);
}

void call(fb::FunctionKind kind) {
  for (const fb::Function *f : *program->functions())
    if (f->kind() == kind)
      return modelc_functions[f->index()](arena);
}

void expectNear(const char *what, const float *got, const double *want, int n) {
  double worst = 0;
  for (int i = 0; i < n; ++i)
    worst = std::fmax(worst, std::fabs(got[i] - want[i]));
  bool ok = worst <= 1e-5;
  failed |= !ok;
  std::printf("%s: %s (max error %.1e)\n", what, ok ? "ok" : "MISMATCH", worst);
}

} // namespace

int main() {
  flatbuffers::Verifier verifier(modelc_manifest, modelc_manifest_size);
  if (!fb::VerifyProgramBuffer(verifier)) {
    std::printf("the manifest does not verify\n");
    return 1;
  }
  program = fb::GetProgram(modelc_manifest);
  printManifest();

  // The arena as the runtime makes it: 64-byte aligned, zeroed; NaN-filled
  // scratch would show a read of a temporary before its write.
  size_t bytes = (program->arena_bytes() + 63) / 64 * 64;
  arena = static_cast<uint8_t *>(std::aligned_alloc(64, bytes));
  std::memset(arena, 0, bytes);
  std::memset(arena + program->persistent_bytes(), 0xff,
              bytes - program->persistent_bytes());
  float *w = tensor("w"), *b = tensor("b"), *x = tensor("T:in:x");
  for (int i = 0; i < 32; ++i)
    w[i] = 0.05f * float(i % 7) - 0.1f;
  for (int i = 0; i < 4; ++i)
    b[i] = 0.25f * float(i) - 0.3f;
  for (int i = 0; i < 16; ++i)
    x[i] = 0.1f * float(i) - 0.7f;

  // fwd_bwd: y = tanh(x w^T + b), loss = sum(y).
  double y[8], loss = 0;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      double sum = b[j];
      for (int k = 0; k < 8; ++k)
        sum += double(x[i * 8 + k]) * w[j * 8 + k];
      y[i * 4 + j] = std::tanh(sum);
      loss += y[i * 4 + j];
    }
  call(fb::FunctionKind::FwdBwd);
  expectNear("fwd_bwd y", tensor("T:out:y"), y, 8);
  expectNear("fwd_bwd loss", tensor("T:out:loss"), &loss, 1);

  // update: w = 2 w + c, c = (0.5, 1, ..., 4) per row.
  double updated[32];
  for (int i = 0; i < 32; ++i)
    updated[i] = 2.0 * w[i] + 0.5 * (i % 8 + 1);
  call(fb::FunctionKind::Update);
  expectNear("update w", w, updated, 32);

  // infer: z = x2 w with the updated w.
  float *x2 = tensor("I:in:x");
  for (int i = 0; i < 8; ++i)
    x2[i] = 0.3f * float(i) - 1.0f;
  double z[16];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 8; ++j) {
      z[i * 8 + j] = 0;
      for (int k = 0; k < 4; ++k)
        z[i * 8 + j] += double(x2[i * 4 + k]) * w[k * 8 + j];
    }
  call(fb::FunctionKind::Infer);
  expectNear("infer z", tensor("I:out:z"), z, 16);

  std::free(arena);
  std::printf(failed ? "some checks failed\n" : "all checks passed\n");
  return failed ? 1 : 0;
}
