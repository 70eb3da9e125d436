// The rendezvous of several processes (runtime/dist/Rendezvous.h), with
// the server and its clients in this process on loopback: the store shim
// loads; set, get, age and wait; Gloo ranks meet through it; a client that
// starts before the master waits for it; a rank missing from the
// rendezvous and a master that never answers are named after the timeout;
// a process whose heartbeat stops, or that reports a failure, is named by
// Liveness::lost; a port in use is refused with a hint, and another server
// on the port is named as such.
#include "runtime/dist/Gloo.h"
#include "runtime/dist/Rendezvous.h"

#include "TestPorts.h"

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace modelc::rt::dist {
namespace {

using std::chrono::milliseconds;
using test::freePort;

std::unique_ptr<StoreServer> serve(int port, int clients = 16) {
  Result<std::unique_ptr<StoreServer>> s =
      StoreServer::serve(port, false, clients);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s ? s.take() : nullptr;
}

std::unique_ptr<TcpStore> open(int port, milliseconds timeout) {
  Result<std::unique_ptr<TcpStore>> s =
      TcpStore::open("127.0.0.1", port, timeout);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s ? s.take() : nullptr;
}

LaunchPlan plan(int processes, int process, int ranksPerProcess, int port) {
  LaunchPlan p;
  p.processes = processes;
  p.process = process;
  p.ranksPerProcess = ranksPerProcess;
  p.masterHost = "127.0.0.1";
  p.masterPort = port;
  return p;
}

TEST(DistRendezvous, SetGetAgeAndWait) {
  int port = freePort();
  auto server = serve(port);
  auto store = open(port, milliseconds(5000));
  ASSERT_TRUE(server && store);
  std::string value("a\0b\nc", 5); // any bytes
  ASSERT_TRUE(store->set("k/1", value, milliseconds(1000)).ok());
  Result<std::optional<std::string>> got = store->get("k/1", milliseconds(1000));
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->value_or(""), value);
  Result<std::optional<std::string>> absent =
      store->get("k/2", milliseconds(1000));
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
  std::this_thread::sleep_for(milliseconds(120));
  Result<std::optional<int64_t>> age = store->age("k/1", milliseconds(1000));
  ASSERT_TRUE(age.ok() && age->has_value());
  EXPECT_GE(**age, 100);
  EXPECT_LT(**age, 5000);
  // A wait returns when another client sets the key.
  std::thread setter([&] {
    std::this_thread::sleep_for(milliseconds(200));
    auto other = open(port, milliseconds(5000));
    EXPECT_TRUE(other->set("late", "x", milliseconds(1000)).ok());
  });
  EXPECT_TRUE(store->wait({"k/1", "late"}, milliseconds(5000)).ok());
  setter.join();
}

TEST(DistRendezvous, GlooRanksMeetThroughIt) {
  int port = freePort();
  auto server = serve(port);
  ASSERT_TRUE(server);
  const int size = 3;
  std::vector<std::vector<double>> out(size);
  std::vector<std::string> errors(size);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank)
    threads.emplace_back([&, rank] {
      auto store = open(port, milliseconds(20000));
      Result<std::unique_ptr<GlooCommunicator>> c = GlooCommunicator::connect(
          store->callbacks(), rank, size, "127.0.0.1", milliseconds(20000));
      if (!c) {
        errors[size_t(rank)] = c.status().message();
        return;
      }
      std::vector<double> x = {double(rank + 1), 0.25 * rank};
      Status s = (*c)->allReduceSum(x.data(), x.size());
      if (!s.ok())
        errors[size_t(rank)] = s.message();
      out[size_t(rank)] = x;
    });
  for (std::thread &t : threads)
    t.join();
  for (int rank = 0; rank < size; ++rank) {
    EXPECT_EQ(errors[size_t(rank)], "");
    EXPECT_EQ(out[size_t(rank)], (std::vector<double>{6.0, 0.75}));
  }
}

TEST(DistRendezvous, ClientWaitsForALateMaster) {
  int port = freePort();
  auto store = open(port, milliseconds(10000));
  std::unique_ptr<StoreServer> server;
  std::thread master([&] {
    std::this_thread::sleep_for(milliseconds(400));
    server = serve(port);
  });
  Status set = store->set("early", "1", milliseconds(10000));
  master.join();
  EXPECT_TRUE(set.ok()) << set.message();
}

TEST(DistRendezvous, MissingRankAndSilentMasterAreNamed) {
  int port = freePort();
  {
    auto server = serve(port);
    auto store = open(port, milliseconds(500));
    ASSERT_TRUE(store->set("0", "", milliseconds(500)).ok());
    Status s = store->wait({"0", "rank_1", "2"}, milliseconds(500));
    EXPECT_EQ(s.message(), "the rendezvous timed out after 0.5 s: rank 1, "
                           "rank 2 did not join");
    EXPECT_EQ(s.exitCode(), kExitLostRank);
  }
  auto store = open(port, milliseconds(600));
  Status s = store->wait({"0"}, milliseconds(600));
  EXPECT_EQ(s.message(),
            "the rendezvous timed out after 0.6 s: no answer from the master "
            "at 127.0.0.1:" +
                std::to_string(port) +
                " (node 0 serves it: is it running, and is the address "
                "right?)");
}

TEST(DistRendezvous, LivenessNamesTheLostProcess) {
  int port = freePort();
  auto server = serve(port);
  auto store = open(port, milliseconds(5000));
  Liveness zero(*store, plan(3, 0, 1, port));
  auto two = std::make_unique<Liveness>(*store, plan(3, 2, 1, port));
  {
    Liveness one(*store, plan(3, 1, 1, port));
    // Everyone beats: nothing lost.
    EXPECT_EQ(zero.lost(milliseconds(600)), "");
  }
  // Rank 1 stopped beating: named once its heartbeat is stale.
  std::string lost = zero.lost(milliseconds(6000));
  EXPECT_EQ(lost.rfind("rank 1: no heartbeat for ", 0), 0u) << lost;
  two->reportFailure("data file x.npy is truncated");
  EXPECT_NE(zero.lost(milliseconds(0)).find(
                "rank 2: it stopped: data file x.npy is truncated"),
            std::string::npos);
  LaunchPlan nodes = plan(2, 1, 4, port);
  Liveness node(*store, nodes);
  EXPECT_EQ(node.describe(1), "node 1 (ranks 4-7)");
}

TEST(DistRendezvous, APortInUseIsRefused) {
  int port = freePort();
  auto first = serve(port);
  Result<std::unique_ptr<StoreServer>> second =
      StoreServer::serve(port, false, 4);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("cannot serve the rendezvous on "
                                           "port " +
                                           std::to_string(port)),
            std::string::npos)
      << second.status().message();
}

TEST(DistRendezvous, AnotherServerOnThePortIsNamed) {
  // A server that answers every request 404 without the store's marker.
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr *>(&address), length),
            0);
  ASSERT_EQ(::listen(listener, 4), 0);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr *>(&address),
                          &length),
            0);
  int port = ntohs(address.sin_port);
  std::thread other([listener] {
    int fd = ::accept(listener, nullptr, nullptr);
    char request[4096];
    (void)!::read(fd, request, sizeof(request));
    const char reply[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
                         "Connection: close\r\n\r\n";
    (void)!::write(fd, reply, sizeof(reply) - 1);
    ::close(fd);
  });
  auto store = open(port, milliseconds(2000));
  Status s = store->set("k", "v", milliseconds(2000));
  other.join();
  ::close(listener);
  EXPECT_EQ(s.message(), "the server at 127.0.0.1:" + std::to_string(port) +
                             " is not a modelc rendezvous (it answered 404): "
                             "is --master the port of node 0 of this run?");
}

TEST(DistRendezvous, LocalAddressTowardLoopback) {
  Result<std::string> address = localAddressToward("127.0.0.1", 29500);
  ASSERT_TRUE(address.ok()) << address.status().message();
  EXPECT_EQ(*address, "127.0.0.1");
  Result<std::string> bad = localAddressToward("no-such-host.invalid", 1);
  EXPECT_FALSE(bad.ok());
}

} // namespace
} // namespace modelc::rt::dist
