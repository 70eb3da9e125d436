// `describe` and `describe --json`: entries, data, the parameter table with
// its total, the memory plan, targets and source hash.
#include "driver_TestProgram.h"

#include <nlohmann/json.hpp>

namespace modelc::rt::test {
namespace {

TEST_F(DriverTest, DescribeText) {
  RunResult r = run({"describe"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const std::string &expected :
       {std::string("program linear.mdl\n"),
        "source hash " + options.sourceHash + "\n",
        std::string("targets cpu\n"),
        std::string("train fit\n  data points, batch 4 x accumulate 1, 2 "
                    "epochs\n"),
        std::string("  optimizer sgd(lr 0.05, momentum 0.9, weight_decay 0, "
                    "nesterov false), schedule constant(), grad_clip off\n"),
        std::string("  eval points_eval every epoch, the whole set\n"),
        std::string("  outputs loss, mae\n\n"),
        std::string("infer predict\n  batch 4\n  input x: f32[4, 2]\n  output "
                    "y: f32[4]\n  output y2: f32[4]\n"),
        std::string("  points.x: f32[2] = npy(\"" + options.trainX + "\")\n"),
        std::string("  fc.weight  f32    [1, 2]              2  "
                    "kaiming_uniform(2)\n"),
        std::string("  fc.bias    f32    [1]                 1  zeros()\n"),
        std::string("  total                                 3\n"),
        std::string("memory plan (CPU)\n  arena       ")}) {
    EXPECT_NE(r.out.find(expected), std::string::npos)
        << "missing: " << expected << "\nin:\n"
        << r.out;
  }
}

TEST_F(DriverTest, DescribeJson) {
  RunResult r = run({"describe", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["source_hash"], options.sourceHash);
  EXPECT_EQ(j["targets"], nlohmann::json::array({"cpu"}));
  EXPECT_EQ(j["total_parameters"], 3);
  EXPECT_EQ(j["parameters"][0]["name"], "fc.weight");
  EXPECT_EQ(j["parameters"][0]["shape"], nlohmann::json::array({1, 2}));
  EXPECT_EQ(j["parameters"][0]["init_args"], nlohmann::json::array({2.0}));
  EXPECT_EQ(j["train"][0]["eval"]["data"], "points_eval");
  EXPECT_EQ(j["train"][0]["optimizer"]["kind"], "sgd");
  EXPECT_TRUE(j["train"][0]["checkpoint"].is_null());
  EXPECT_EQ(j["infer"][1]["outputs"][0]["name"], "y");
  EXPECT_EQ(j["datasets"][1]["name"], "points_eval");
  EXPECT_GT(j["memory"]["arena_bytes"].get<uint64_t>(),
            j["memory"]["persistent_bytes"].get<uint64_t>());
  // Two f32 parameters of 2 and 1 elements and their gradients.
  const nlohmann::json &f32 = j["memory"]["persistent_by_dtype"]["f32"];
  EXPECT_EQ(f32["by_role"]["parameters"], 12);
  EXPECT_EQ(f32["by_role"]["gradients"], 12);
}

// A cuda,cpu program: the GPU's memory plan, kernel count and images too,
// and what each function launches per call: fit.fwd_bwd launches k0 twice
// and k1 once, fit.update k1 once; a step is one of each (accumulate 1).
TEST_F(DriverTest, DescribeGpu) {
  options.targets = {"cuda", "cpu"};
  options.withGpu = true;
  RunResult r = run({"describe"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const std::string &expected :
       {std::string("targets cuda, cpu\n"),
        std::string("memory plan (GPU)\n  arena       "),
        std::string("  workspace   1.0 KiB (1024 bytes, cuBLASLt)\n"),
        std::string("  kernels     2 distinct\n"),
        std::string("  images      sm_80 (PTX "),
        std::string("  fit.fwd_bwd     3 launches of 2 kernels, 0 GEMMs, 0 "
                    "all-reduces\n"),
        std::string("  fit.update      1 launches of 1 kernels, 0 GEMMs, 0 "
                    "all-reduces\n"),
        std::string("  per optimizer step of fit: 4 nodes (1 x fwd_bwd + "
                    "update)\n")})
    EXPECT_NE(r.out.find(expected), std::string::npos)
        << "missing: " << expected << "\nin:\n"
        << r.out;
  r = run({"describe", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpu"]["workspace_bytes"], 1024);
  EXPECT_EQ(j["gpu"]["kernels"], 2);
  EXPECT_EQ(j["gpu"]["functions"][0]["name"], "fit.fwd_bwd");
  EXPECT_EQ(j["gpu"]["functions"][0]["launches"], 3);
  EXPECT_EQ(j["gpu"]["functions"][0]["distinct_kernels"], 2);
  EXPECT_EQ(j["gpu"]["functions"][0]["graph_nodes"], 3);
  EXPECT_EQ(j["gpu"]["functions"][1]["launches"], 1);
  EXPECT_EQ(j["gpu"]["optimizer_steps"]["fit"]["graph_nodes"], 4);
  // Each kernel's launch shape and the bytes of its buffers (k1's U64
  // parameter is not a buffer).
  const nlohmann::json &k1 = j["gpu"]["kernel_table"][1];
  EXPECT_EQ(k1["name"], "k1");
  EXPECT_EQ(k1["grid"], 1);
  EXPECT_EQ(k1["block"], 32);
  EXPECT_EQ(k1["buffer_bytes"], 16);
  EXPECT_EQ(k1["reduction"], 0);
  EXPECT_EQ(j["gpu"]["images"][0]["arch"], "sm_80");
  EXPECT_EQ(j["gpu"]["images"][0]["kind"], "ptx");
  EXPECT_GT(j["gpu"]["arena_bytes"].get<uint64_t>(),
            j["memory"]["arena_bytes"].get<uint64_t>());
}

} // namespace
} // namespace modelc::rt::test
