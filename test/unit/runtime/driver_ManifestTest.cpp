// A manifest that does not verify or does not fit the arena or the function
// table is an internal error (exit 1) before anything runs.
#include "driver_TestProgram.h"

#include "manifest_generated.h"
#include "runtime/driver/Manifest.h"

#include <cstring>
#include <sstream>

namespace modelc::rt::test {
namespace {

namespace fb = modelc::manifest;

int runWith(const std::vector<uint8_t> &manifest, size_t numFunctions,
            std::string &err) {
  const char *argv[] = {"prog", "describe"};
  std::ostringstream out, errs;
  ProgramIO io{out, errs, false};
  int code = runProgram(
      2, argv,
      {manifest.data(), manifest.size(), testFunctions(), numFunctions}, io);
  err = errs.str();
  return code;
}

// A program with one buffer, as the test wants it.
std::vector<uint8_t> oneBuffer(uint64_t offset, uint64_t bytes,
                               uint64_t arenaBytes, uint32_t version = 1,
                               fb::Role role = fb::Role::Param) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<int64_t> shape{4};
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers{
      fb::CreateBufferDirect(fbb, "w", role, fb::Phase::Shared, "", "w",
                             fb::DType::F32, &shape, offset, bytes)};
  fbb.Finish(fb::CreateProgramDirect(fbb, version, "m.mdl", "h", nullptr,
                                     arenaBytes, arenaBytes, nullptr, nullptr,
                                     nullptr, nullptr, &buffers));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

// A parameter w f32[4] whose gradient buffer (index 1 of 2) has the given
// role and dtype; `gradIndex` is what the parameter records.
std::vector<uint8_t> paramWithGradient(fb::Role role, fb::DType dtype,
                                       int32_t gradIndex) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<int64_t> shape{4};
  uint64_t gradBytes = dtype == fb::DType::F64 ? 32 : 16;
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers{
      fb::CreateBufferDirect(fbb, "w", fb::Role::Param, fb::Phase::Shared, "",
                             "w", fb::DType::F32, &shape, 0, 16),
      fb::CreateBufferDirect(fbb, "grad:w", role, fb::Phase::Shared, "", "w",
                             dtype, &shape, 64, gradBytes)};
  std::vector<double> noArgs;
  std::vector<flatbuffers::Offset<fb::Param>> params{
      fb::CreateParamDirect(fbb, "w", fb::DType::F32, &shape,
                            fb::InitKind::Zeros, &noArgs, 0, gradIndex)};
  fbb.Finish(fb::CreateProgramDirect(fbb, 1, "m.mdl", "h", nullptr, 128, 128,
                                     nullptr, nullptr, &params, nullptr,
                                     &buffers));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

// A one-buffer program (arena 256, persistent 64) whose scratch peak has
// `liveBytes` live, `dtype` bytes of them in one entry.
std::vector<uint8_t> withScratchPeak(uint64_t liveBytes, fb::DType dtype) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<int64_t> shape{4};
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers{
      fb::CreateBufferDirect(fbb, "w", fb::Role::Param, fb::Phase::Shared, "",
                             "w", fb::DType::F32, &shape, 0, 16)};
  std::vector<flatbuffers::Offset<fb::DTypeBytes>> dtypes{
      fb::CreateDTypeBytes(fbb, dtype, liveBytes)};
  auto peak = fb::CreateScratchPeakDirect(fbb, "m.fwd_bwd", liveBytes, &dtypes);
  fbb.Finish(fb::CreateProgramDirect(fbb, 1, "m.mdl", "h", nullptr, 256, 64,
                                     nullptr, nullptr, nullptr, nullptr,
                                     &buffers, nullptr, 0, peak));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

void expectCorrupt(const std::vector<uint8_t> &manifest, const std::string &why,
                   size_t numFunctions = 5) {
  std::string err;
  EXPECT_EQ(runWith(manifest, numFunctions, err), 1) << why;
  EXPECT_NE(
      err.find("internal error: the program's manifest is corrupt (" + why),
      std::string::npos)
      << err;
}

TEST(DriverManifest, ValidOneBufferProgramLoads) {
  std::vector<uint8_t> m = oneBuffer(64, 16, 128);
  EXPECT_TRUE(Manifest::load(m.data(), m.size(), nullptr, 0).ok());
}

TEST(DriverManifest, AnyAlignmentOfTheEmbeddedArrayLoads) {
  std::vector<uint8_t> m = buildManifest(ProgramOptions());
  std::vector<uint8_t> shifted(m.size() + 3);
  std::memcpy(shifted.data() + 3, m.data(), m.size());
  Result<Manifest> loaded = Manifest::load(shifted.data() + 3, m.size(),
                                           testFunctions(), numTestFunctions());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->params.size(), 2u);
}

TEST(DriverManifest, GarbageAndTruncationDoNotVerify) {
  expectCorrupt(std::vector<uint8_t>(64, 0xab),
                "the flatbuffer does not verify");
  std::vector<uint8_t> m = buildManifest(ProgramOptions());
  m.resize(m.size() / 2);
  expectCorrupt(m, "the flatbuffer does not verify");
  expectCorrupt({}, "the flatbuffer does not verify");
}

TEST(DriverManifest, BuffersMustLieInTheArena) {
  expectCorrupt(oneBuffer(128, 16, 128), "buffer w lies outside the arena");
  expectCorrupt(oneBuffer(32, 16, 128), "buffer w lies outside the arena");
  expectCorrupt(oneBuffer(~uint64_t(63), 16, 128),
                "buffer w lies outside the arena");
  expectCorrupt(oneBuffer(0, 12, 128), "buffer w has 12 bytes for shape [4]");
}

TEST(DriverManifest, TheScratchPeakFitsTheScratchRegion) {
  std::string err;
  EXPECT_EQ(runWith(withScratchPeak(192, fb::DType::BF16), 5, err), 0) << err;
  expectCorrupt(withScratchPeak(193, fb::DType::BF16),
                "the scratch peak is larger than the scratch region");
  expectCorrupt(withScratchPeak(16, fb::DType(99)), "");
}

TEST(DriverManifest, VersionsAndEnumsAreChecked) {
  expectCorrupt(oneBuffer(0, 16, 64, 2), "version 2");
  expectCorrupt(oneBuffer(0, 16, 64, 1, fb::Role(17)),
                "buffer w has an unknown role");
}

TEST(DriverManifest, ParametersAndTheirGradientsMustAgree) {
  std::vector<uint8_t> m = paramWithGradient(fb::Role::Grad, fb::DType::F32, 1);
  Result<Manifest> loaded = Manifest::load(m.data(), m.size(), nullptr, 0);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->gradBuffer(loaded->params[0]), &loaded->buffers[1]);
  m = paramWithGradient(fb::Role::Grad, fb::DType::F32, -1);
  loaded = Manifest::load(m.data(), m.size(), nullptr, 0);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->gradBuffer(loaded->params[0]), nullptr);
  expectCorrupt(paramWithGradient(fb::Role::Grad, fb::DType::F32, 2),
                "parameter w has no gradient buffer");
  expectCorrupt(paramWithGradient(fb::Role::State, fb::DType::F32, 1),
                "parameter w and its gradient buffer grad:w disagree");
  expectCorrupt(paramWithGradient(fb::Role::Grad, fb::DType::F64, 1),
                "parameter w and its gradient buffer grad:w disagree");
}

TEST(DriverManifest, FunctionsMustBeInTheTable) {
  expectCorrupt(buildManifest(ProgramOptions()),
                "function predict1.infer is not in the table", 4);
}

} // namespace
} // namespace modelc::rt::test
