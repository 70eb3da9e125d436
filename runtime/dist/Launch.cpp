// Where this process stands in a distributed run (Launch.h).
#include "runtime/dist/Launch.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>

namespace modelc::rt::dist {

namespace {

/// One launcher's variables: the rank, the count and the local rank of a
/// process it started.
struct Launcher {
  const char *name, *rank, *size, *localRank;
};

constexpr Launcher kLaunchers[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
    {"OpenMPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_RANK"},
};

Result<int> parseInt(const std::string &text, const std::string &what,
                     int low, int high) {
  char *end = nullptr;
  errno = 0;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < low ||
      value > high)
    return Status::error(fmt::format("{} is '{}': expected a whole number "
                                     "from {} to {}",
                                     what, text, low, high));
  return int(value);
}

/// A flag and a variable for the same number: the variable fills in an
/// absent flag; both given must agree.
Status merge(std::optional<int> &flag, const char *flagName,
             std::optional<int> variable, const std::string &variableText) {
  if (!variable)
    return Status();
  if (flag && *flag != *variable)
    return Status::error(fmt::format("{} {} disagrees with {}", flagName,
                                     *flag, variableText));
  flag = variable;
  return Status();
}

} // namespace

Result<std::pair<std::string, int>> parseHostPort(const std::string &text,
                                                  const std::string &what) {
  size_t colon = text.rfind(':');
  std::string host = colon == std::string::npos ? "" : text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  else if (host.find(':') != std::string::npos)
    host.clear(); // an IPv6 address needs its brackets
  if (host.empty())
    return Status::error(fmt::format("{} is '{}': expected HOST:PORT (an "
                                     "IPv6 address in brackets: [::1]:29500)",
                                     what, text));
  Result<int> port = parseInt(text.substr(colon + 1), what + "'s port", 1,
                              65535);
  if (!port)
    return port.status();
  return std::make_pair(host, *port);
}

Result<LaunchPlan> resolveLaunch(const LaunchFlags &flags, int localRanks,
                                 const Getenv &getenv) {
  LaunchPlan plan;
  std::optional<int> nnodes = flags.nnodes, nodeRank = flags.nodeRank,
                     ranksPerNode = flags.ranksPerNode;
  // The first launcher whose rank and size are both set started us, one
  // process per rank.
  for (const Launcher &l : kLaunchers) {
    const char *rank = getenv(l.rank), *size = getenv(l.size);
    if (!rank || !size)
      continue;
    plan.source = l.name;
    auto variable = [&](const char *name, int low,
                        int high) -> Result<std::optional<int>> {
      const char *value = getenv(name);
      if (!value)
        return std::optional<int>();
      Result<int> n = parseInt(value, fmt::format("{} ({})", name, l.name),
                               low, high);
      if (!n)
        return n.status();
      return std::optional<int>(*n);
    };
    Result<std::optional<int>> worldSize = variable(l.size, 1, 1 << 20);
    if (!worldSize)
      return worldSize.status();
    Result<std::optional<int>> processRank =
        variable(l.rank, 0, **worldSize - 1);
    if (!processRank)
      return processRank.status();
    Result<std::optional<int>> localRank = variable(l.localRank, 0, 1 << 20);
    if (!localRank)
      return localRank.status();
    std::string where = fmt::format("({}: one process per rank)", l.name);
    MODELC_RETURN_IF_ERROR(merge(
        nnodes, "--nnodes", *worldSize,
        fmt::format("{}={} {}", l.size, **worldSize, where)));
    MODELC_RETURN_IF_ERROR(merge(
        nodeRank, "--node-rank", *processRank,
        fmt::format("{}={} {}", l.rank, **processRank, where)));
    MODELC_RETURN_IF_ERROR(merge(ranksPerNode, "--ranks-per-node", 1,
                                 fmt::format("1 {}", where)));
    if (!flags.ranksPerNode && localRanks > 1)
      return Status::error(fmt::format(
          "{} ranks asked for in this process (--ranks or --gpus), but {} "
          "started one process per rank ({} and {} are set): run one rank "
          "per process, or start one process per node",
          localRanks, l.name, l.rank, l.size));
    plan.localIndex = localRank->value_or(0);
    break;
  }
  plan.processes = nnodes.value_or(1);
  plan.process = nodeRank.value_or(0);
  plan.ranksPerProcess = ranksPerNode.value_or(localRanks);
  if (plan.processes < 1)
    return Status::error(fmt::format("--nnodes {}: expected at least 1",
                                     plan.processes));
  if (plan.process < 0 || plan.process >= plan.processes)
    return Status::error(fmt::format("--node-rank {} is outside 0..{} "
                                     "(--nnodes {})",
                                     plan.process, plan.processes - 1,
                                     plan.processes));
  if (plan.ranksPerProcess < 1)
    return Status::error(fmt::format("--ranks-per-node {}: expected at "
                                     "least 1",
                                     plan.ranksPerProcess));
  if (plan.processes == 1 && !flags.master)
    return plan;

  // The master: the flag, else MASTER_ADDR and MASTER_PORT.
  const char *address = getenv("MASTER_ADDR"), *port = getenv("MASTER_PORT");
  std::optional<std::pair<std::string, int>> fromVariables;
  if (address || port) {
    if (!address || !port)
      return Status::error(fmt::format(
          "{} is set but {} is not: set both, or pass --master HOST:PORT",
          address ? "MASTER_ADDR" : "MASTER_PORT",
          address ? "MASTER_PORT" : "MASTER_ADDR"));
    std::string host = address;
    Result<std::pair<std::string, int>> parsed = parseHostPort(
        (host.find(':') != std::string::npos ? "[" + host + "]" : host) +
            ":" + port,
        "MASTER_ADDR:MASTER_PORT");
    if (!parsed)
      return parsed.status();
    fromVariables = *parsed;
  }
  if (flags.master) {
    Result<std::pair<std::string, int>> parsed =
        parseHostPort(*flags.master, "--master");
    if (!parsed)
      return parsed.status();
    if (fromVariables && *fromVariables != *parsed)
      return Status::error(fmt::format(
          "--master {} disagrees with MASTER_ADDR={} MASTER_PORT={}",
          *flags.master, address, port));
    fromVariables = *parsed;
  }
  if (!fromVariables)
    return Status::error(fmt::format(
        "a run of {} processes needs the master's address: pass --master "
        "HOST:PORT (or set MASTER_ADDR and MASTER_PORT)",
        plan.processes));
  plan.masterHost = fromVariables->first;
  plan.masterPort = fromVariables->second;
  return plan;
}

} // namespace modelc::rt::dist
