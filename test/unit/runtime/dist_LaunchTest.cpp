// Where a process stands in a distributed run (runtime/dist/Launch.h): the
// flags, torchrun's, Slurm's and OpenMPI's variables, flags and variables
// together (agreeing or not), the master's address, and every bad value
// with its message.
#include "runtime/dist/Launch.h"

#include <gtest/gtest.h>

#include <map>

namespace modelc::rt::dist {
namespace {

struct Env {
  std::map<std::string, std::string> vars;
  Getenv getenv() const {
    return [this](const char *name) -> const char * {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

LaunchPlan ok(const LaunchFlags &flags, int localRanks, const Env &env) {
  Result<LaunchPlan> plan = resolveLaunch(flags, localRanks, env.getenv());
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return plan.ok() ? *plan : LaunchPlan{};
}

std::string error(const LaunchFlags &flags, int localRanks, const Env &env) {
  Result<LaunchPlan> plan = resolveLaunch(flags, localRanks, env.getenv());
  EXPECT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().exitCode(), kExitUsage);
  return plan.ok() ? "" : plan.status().message();
}

TEST(DistLaunch, OneProcessWithoutFlagsOrVariables) {
  LaunchPlan plan = ok({}, 4, {});
  EXPECT_EQ(plan.worldSize(), 4);
  EXPECT_EQ(plan.firstRank(), 0);
  EXPECT_EQ(plan.source, "flags");
  EXPECT_EQ(plan.masterHost, "");
}

TEST(DistLaunch, Flags) {
  LaunchPlan plan = ok({2, 1, std::nullopt, "10.0.0.1:29500"}, 8, {});
  EXPECT_EQ(plan.processes, 2);
  EXPECT_EQ(plan.ranksPerProcess, 8);
  EXPECT_EQ(plan.worldSize(), 16);
  EXPECT_EQ(plan.firstRank(), 8);
  EXPECT_EQ(plan.masterHost, "10.0.0.1");
  EXPECT_EQ(plan.masterPort, 29500);
  plan = ok({2, 0, 3, "[::1]:1234"}, 8, {});
  EXPECT_EQ(plan.worldSize(), 6);
  EXPECT_EQ(plan.masterHost, "::1");
}

TEST(DistLaunch, EachLaunchersVariables) {
  Env torchrun{{{"RANK", "5"}, {"WORLD_SIZE", "16"}, {"LOCAL_RANK", "5"},
                {"MASTER_ADDR", "node0"}, {"MASTER_PORT", "29500"}}};
  LaunchPlan plan = ok({}, 1, torchrun);
  EXPECT_EQ(plan.source, "torchrun");
  EXPECT_EQ(plan.processes, 16);
  EXPECT_EQ(plan.process, 5);
  EXPECT_EQ(plan.ranksPerProcess, 1);
  EXPECT_EQ(plan.localIndex, 5);
  EXPECT_EQ(plan.firstRank(), 5);
  EXPECT_EQ(plan.masterHost, "node0");

  Env slurm{{{"SLURM_PROCID", "9"}, {"SLURM_NTASKS", "16"},
             {"SLURM_LOCALID", "1"}, {"MASTER_ADDR", "n1"},
             {"MASTER_PORT", "6000"}}};
  plan = ok({}, 1, slurm);
  EXPECT_EQ(plan.source, "Slurm");
  EXPECT_EQ(plan.firstRank(), 9);
  EXPECT_EQ(plan.localIndex, 1);

  Env mpi{{{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"},
           {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"MASTER_ADDR", "fe80::1"},
           {"MASTER_PORT", "7000"}}};
  plan = ok({}, 1, mpi);
  EXPECT_EQ(plan.source, "OpenMPI");
  EXPECT_EQ(plan.worldSize(), 4);
  EXPECT_EQ(plan.masterHost, "fe80::1");
  EXPECT_EQ(plan.masterPort, 7000);

  // torchrun inside a Slurm allocation: torchrun, the innermost, wins.
  Env both = slurm;
  both.vars.insert(torchrun.vars.begin(), torchrun.vars.end());
  EXPECT_EQ(ok({}, 1, both).source, "torchrun");
}

TEST(DistLaunch, FlagsAndVariablesMustAgree) {
  Env torchrun{{{"RANK", "1"}, {"WORLD_SIZE", "2"},
                {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"}}};
  LaunchPlan plan = ok({2, 1, std::nullopt, "127.0.0.1:29500"}, 1, torchrun);
  EXPECT_EQ(plan.firstRank(), 1);
  EXPECT_EQ(error({2, 0, std::nullopt, std::nullopt}, 1, torchrun),
            "--node-rank 0 disagrees with RANK=1 (torchrun: one process per "
            "rank)");
  EXPECT_EQ(error({4, std::nullopt, std::nullopt, std::nullopt}, 1, torchrun),
            "--nnodes 4 disagrees with WORLD_SIZE=2 (torchrun: one process "
            "per rank)");
  EXPECT_EQ(error({}, 4, torchrun),
            "4 ranks asked for in this process (--ranks or --gpus), but "
            "torchrun started one process per rank (RANK and WORLD_SIZE are "
            "set): run one rank per process, or start one process per node");
  EXPECT_EQ(error({std::nullopt, std::nullopt, 8, std::nullopt}, 1, torchrun),
            "--ranks-per-node 8 disagrees with 1 (torchrun: one process per "
            "rank)");
  EXPECT_EQ(error({std::nullopt, std::nullopt, std::nullopt, "h:1"}, 1,
                  torchrun),
            "--master h:1 disagrees with MASTER_ADDR=127.0.0.1 "
            "MASTER_PORT=29500");
}

TEST(DistLaunch, BadValuesAreUsageErrors) {
  EXPECT_EQ(error({2, 2, std::nullopt, "h:1"}, 1, {}),
            "--node-rank 2 is outside 0..1 (--nnodes 2)");
  EXPECT_EQ(error({2, 0, std::nullopt, std::nullopt}, 1, {}),
            "a run of 2 processes needs the master's address: pass --master "
            "HOST:PORT (or set MASTER_ADDR and MASTER_PORT)");
  EXPECT_EQ(error({2, 0, std::nullopt, "h"}, 1, {}),
            "--master is 'h': expected HOST:PORT (an IPv6 address in "
            "brackets: [::1]:29500)");
  EXPECT_EQ(error({2, 0, std::nullopt, "::1:80"}, 1, {}),
            "--master is '::1:80': expected HOST:PORT (an IPv6 address in "
            "brackets: [::1]:29500)");
  EXPECT_EQ(error({2, 0, std::nullopt, "h:0"}, 1, {}),
            "--master's port is '0': expected a whole number from 1 to 65535");
  EXPECT_EQ(error({2, 0, std::nullopt, "h:70000"}, 1, {}),
            "--master's port is '70000': expected a whole number from 1 to "
            "65535");
  EXPECT_EQ(error({}, 1, {{{"RANK", "x"}, {"WORLD_SIZE", "2"}}}),
            "RANK (torchrun) is 'x': expected a whole number from 0 to 1");
  EXPECT_EQ(error({}, 1, {{{"RANK", "2"}, {"WORLD_SIZE", "2"}}}),
            "RANK (torchrun) is '2': expected a whole number from 0 to 1");
  EXPECT_EQ(error({}, 1, {{{"RANK", "0"}, {"WORLD_SIZE", "0"}}}),
            "WORLD_SIZE (torchrun) is '0': expected a whole number from 1 to "
            "1048576");
  EXPECT_EQ(error({}, 1,
                  {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}}),
            "MASTER_ADDR is set but MASTER_PORT is not: set both, or pass "
            "--master HOST:PORT");
  EXPECT_EQ(error({0, std::nullopt, std::nullopt, std::nullopt}, 1, {}),
            "--nnodes 0: expected at least 1");
}

} // namespace
} // namespace modelc::rt::dist
