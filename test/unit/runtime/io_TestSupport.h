// Helpers shared by the runtime's io_ and data_ unit tests: a scratch
// directory per test, byte-level file building, gzip/deflate encoders, a
// zip archive builder, and the check that a loader failed the way the spec
// requires.
#pragma once

#include "runtime/support/Status.h"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <vector>
#include <zlib.h>

namespace modelc::rt::test {

/// A fresh directory removed with everything in it at the end of the test.
class ScratchDir {
public:
  ScratchDir() {
    std::string pattern = testing::TempDir() + "modelc-rt-XXXXXX";
    if (!::mkdtemp(pattern.data()))
      ADD_FAILURE() << "mkdtemp failed for " << pattern;
    root_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;

  std::string path(const std::string &name) const { return root_ + "/" + name; }

private:
  std::string root_;
};

/// Replaces the file at `path`. Removing it first makes a new file rather
/// than truncating the old one, which ext4 would flush to disk on close.
inline void writeBytes(const std::string &path, const std::string &bytes) {
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

inline std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Appends `value` as `size` little-endian bytes.
inline void putLE(std::string &out, uint64_t value, int size) {
  for (int i = 0; i < size; ++i)
    out.push_back(char((value >> (8 * i)) & 0xff));
}

/// Appends `value` as 4 big-endian bytes (idx headers).
inline void putBE32(std::string &out, uint32_t value) {
  for (int i = 3; i >= 0; --i)
    out.push_back(char((value >> (8 * i)) & 0xff));
}

/// Compresses with zlib: windowBits 16 + 15 gives gzip, -15 raw deflate.
inline std::string deflateWith(const std::string &bytes, int windowBits) {
  z_stream z{};
  deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, windowBits, 8,
               Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, uLong(bytes.size())) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(bytes.data()));
  z.avail_in = uInt(bytes.size());
  z.next_out = reinterpret_cast<Bytef *>(out.data());
  z.avail_out = uInt(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

inline std::string gzipBytes(const std::string &bytes) {
  return deflateWith(bytes, 16 + MAX_WBITS);
}

inline std::string rawDeflate(const std::string &bytes) {
  return deflateWith(bytes, -MAX_WBITS);
}

struct ZipEntry {
  std::string name;
  std::string data; // uncompressed
  uint16_t method = 0;
  /// As numpy.savez's zipfile with force_zip64: 0xffffffff sizes in the
  /// local header and the real ones in a zip64 extra field.
  bool zip64LocalHeader = false;
  uint16_t flags = 0;
};

/// Builds a zip archive; `zip64Count` marks the end record as zip64's.
inline std::string buildZip(const std::vector<ZipEntry> &entries,
                            bool zip64Count = false) {
  std::string out, directory;
  for (const ZipEntry &entry : entries) {
    std::string stored =
        entry.method == 8 ? rawDeflate(entry.data) : entry.data;
    uint32_t crc =
        uint32_t(crc32(0, reinterpret_cast<const Bytef *>(entry.data.data()),
                       uInt(entry.data.size())));
    std::string extra;
    if (entry.zip64LocalHeader) {
      putLE(extra, 1, 2);
      putLE(extra, 16, 2);
      putLE(extra, entry.data.size(), 8);
      putLE(extra, stored.size(), 8);
    }
    uint32_t offset = uint32_t(out.size());
    putLE(out, 0x04034b50, 4);
    putLE(out, 20, 2);
    putLE(out, entry.flags, 2);
    putLE(out, entry.method, 2);
    putLE(out, 0, 4); // time and date
    putLE(out, crc, 4);
    putLE(out, entry.zip64LocalHeader ? 0xffffffff : stored.size(), 4);
    putLE(out, entry.zip64LocalHeader ? 0xffffffff : entry.data.size(), 4);
    putLE(out, entry.name.size(), 2);
    putLE(out, extra.size(), 2);
    out += entry.name + extra + stored;

    putLE(directory, 0x02014b50, 4);
    putLE(directory, 20, 2);
    putLE(directory, 20, 2);
    putLE(directory, entry.flags, 2);
    putLE(directory, entry.method, 2);
    putLE(directory, 0, 4);
    putLE(directory, crc, 4);
    putLE(directory, stored.size(), 4);
    putLE(directory, entry.data.size(), 4);
    putLE(directory, entry.name.size(), 2);
    putLE(directory, 0, 2); // extra
    putLE(directory, 0, 2); // comment
    putLE(directory, 0, 4); // disk, internal attributes
    putLE(directory, 0, 4); // external attributes
    putLE(directory, offset, 4);
    directory += entry.name;
  }
  uint32_t directoryOffset = uint32_t(out.size());
  out += directory;
  putLE(out, 0x06054b50, 4);
  putLE(out, 0, 4);
  uint16_t count = zip64Count ? 0xffff : uint16_t(entries.size());
  putLE(out, count, 2);
  putLE(out, count, 2);
  putLE(out, directory.size(), 4);
  putLE(out, directoryOffset, 4);
  putLE(out, 0, 2);
  return out;
}

/// A usage error (exit status 2) whose message names `file` and contains
/// `phrase`.
inline testing::AssertionResult failsWith(const Status &status,
                                          const std::string &file,
                                          const std::string &phrase) {
  if (status.ok())
    return testing::AssertionFailure()
           << "succeeded, expected an error with '" << phrase << "'";
  const std::string &message = status.message();
  if (status.exitCode() != kExitUsage)
    return testing::AssertionFailure()
           << "exit code " << status.exitCode() << " for: " << message;
  if (message.find(file) == std::string::npos)
    return testing::AssertionFailure()
           << "message does not name '" << file << "': " << message;
  if (message.find(phrase) == std::string::npos)
    return testing::AssertionFailure()
           << "message lacks '" << phrase << "': " << message;
  return testing::AssertionSuccess();
}

template <typename T>
testing::AssertionResult failsWith(const Result<T> &result,
                                   const std::string &file,
                                   const std::string &phrase) {
  return failsWith(result.status(), file, phrase);
}

} // namespace modelc::rt::test
