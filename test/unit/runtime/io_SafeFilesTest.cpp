// Safe file access (issue 13): temporary files created exclusively and
// never through a link, mode 0644 under the umask, writability checks,
// inputs that are not regular files refused without blocking, and a mapped
// file that shrinks ending the program with a message instead of SIGBUS.
#include "runtime/io/Files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace modelc::rt {
namespace {

namespace fs = std::filesystem;

class SafeFilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/modelc-safefiles-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string path(const std::string &name) const { return dir_ + "/" + name; }
  static std::string read(const std::string &p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const fs::directory_entry &e : fs::directory_iterator(dir_))
      out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string dir_;
};

TEST_F(SafeFilesTest, TemporaryNamesAreNewAndLinksAreNotFollowed) {
  std::ofstream(path("victim")) << "precious";
  // The old fixed temporary name, planted as a link: not used.
  fs::create_symlink(path("victim"), path("w.bin.tmp"));
  ASSERT_TRUE(writeFileAtomically(path("w.bin"), "new").ok());
  EXPECT_EQ(read(path("victim")), "precious");
  EXPECT_EQ(read(path("w.bin")), "new");
  EXPECT_EQ(names(), (std::vector<std::string>{"victim", "w.bin", "w.bin.tmp"}));
  // A link at the target itself is replaced, not written through.
  fs::create_symlink(path("victim"), path("l.bin"));
  ASSERT_TRUE(writeFileAtomically(path("l.bin"), "mine").ok());
  EXPECT_EQ(read(path("victim")), "precious");
  EXPECT_FALSE(fs::is_symlink(path("l.bin")));
}

TEST_F(SafeFilesTest, FilesGet0644UnderTheUmask) {
  mode_t old = ::umask(027);
  Status s = writeFileAtomically(path("w.bin"), "x");
  ::umask(old);
  ASSERT_TRUE(s.ok());
  struct stat st;
  ASSERT_EQ(::stat(path("w.bin").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST_F(SafeFilesTest, TwoWritersOfOneFileDoNotShareATemporary) {
  Result<AtomicFile> a = AtomicFile::create(path("w.bin"));
  Result<AtomicFile> b = AtomicFile::create(path("w.bin"));
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(a->write("aaaa", 4).ok());
  ASSERT_TRUE(b->write("bb", 2).ok());
  ASSERT_TRUE(a->commit().ok());
  EXPECT_EQ(read(path("w.bin")), "aaaa");
  ASSERT_TRUE(b->commit().ok());
  EXPECT_EQ(read(path("w.bin")), "bb");
  EXPECT_EQ(names(), std::vector<std::string>{"w.bin"});
}

TEST_F(SafeFilesTest, CheckWritable) {
  EXPECT_TRUE(checkWritable(path("out.bin"), "--save").ok());
  EXPECT_TRUE(names().empty()); // the probe is gone
  Status missing = checkWritable(path("no/out.bin"), "--save");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.message(), "--save " + path("no/out.bin") +
                                   ": the directory " + path("no") +
                                   " does not exist; create it first");
  fs::create_directories(path("d"));
  Status isDir = checkWritable(path("d"), "--output");
  ASSERT_FALSE(isDir.ok());
  EXPECT_NE(isDir.message().find("is a directory"), std::string::npos);
}

TEST_F(SafeFilesTest, NonRegularInputsAreRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  Result<std::shared_ptr<const Blob>> mapped = mapFile(path("fifo"));
  ASSERT_FALSE(mapped.ok());
  EXPECT_EQ(mapped.status().message(),
            path("fifo") + ": not a regular file (a FIFO); give a file");
  Result<std::string> whole = readWholeFile(path("fifo"), 100);
  ASSERT_FALSE(whole.ok());
  EXPECT_NE(whole.status().message().find("(a FIFO)"), std::string::npos);
  Result<std::string> dir = readWholeFile(dir_, 100);
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("(a directory)"), std::string::npos);
  Result<std::shared_ptr<const Blob>> device = mapFile("/dev/null");
  ASSERT_FALSE(device.ok());
  EXPECT_NE(device.status().message().find("(a device)"), std::string::npos);
}

TEST_F(SafeFilesTest, AMappedFileThatShrinksEndsTheProgramNamingIt) {
  std::string file = path("data.bin");
  {
    std::ofstream out(file, std::ios::binary);
    std::string page(1 << 16, 'x');
    out << page;
  }
  // OpenBLAS has threads: re-execute rather than fork in place.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        installMappedFileGuard("prog");
        Result<std::shared_ptr<const Blob>> blob = mapFile(file);
        if (!blob.ok())
          ::_exit(9);
        if (::truncate(file.c_str(), 0) != 0)
          ::_exit(8);
        volatile uint8_t sink = (*blob)->data()[(1 << 16) - 1];
        (void)sink;
        ::_exit(7);
      },
      ::testing::ExitedWithCode(2),
      "prog: error: .*data.bin: the file became shorter while the program "
      "read it");
}

} // namespace
} // namespace modelc::rt
