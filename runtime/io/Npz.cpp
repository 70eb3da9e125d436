// .npz archives: a minimal zip reader (the central directory, stored and
// deflated members, CRC-32 checked; zip64 refused) and a writer of stored
// members, as numpy.savez writes them.
#include "runtime/io/Npy.h"

#include "runtime/io/Files.h"
#include "runtime/io/Gzip.h"
#include "runtime/io/Shape.h"

#include <cstring>
#include <fmt/format.h>
#include <new>
#include <set>
#include <string_view>
#include <zlib.h>

namespace modelc::rt {

namespace {

constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEndOfCentralDirectorySignature = 0x06054b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kEndOfCentralDirectorySize = 22;
constexpr uint16_t kStored = 0, kDeflated = 8;
/// Version 2.0 (deflate); "made by" Unix so that permissions survive.
constexpr uint16_t kVersionNeeded = 20, kVersionMadeBy = (3 << 8) | 20;
/// 1980-01-01 00:00, the zip epoch: a fixed time keeps archives reproducible.
constexpr uint16_t kDosTime = 0, kDosDate = (1 << 5) | 1;

uint32_t load(const uint8_t *bytes, size_t size) {
  uint32_t value = 0;
  for (size_t i = 0; i < size; ++i)
    value |= uint32_t(bytes[i]) << (8 * i);
  return value;
}
uint16_t load16(const uint8_t *bytes) { return uint16_t(load(bytes, 2)); }
uint32_t load32(const uint8_t *bytes) { return load(bytes, 4); }

void store16(std::string &out, uint32_t value) {
  out.push_back(char(value & 0xff));
  out.push_back(char((value >> 8) & 0xff));
}
void store32(std::string &out, uint32_t value) {
  store16(out, value & 0xffff);
  store16(out, value >> 16);
}

/// One central directory entry.
struct Member {
  std::string name;
  uint16_t flags, method;
  uint32_t crc, compressedSize, size, localHeaderOffset;
};

/// Finds the end-of-central-directory record and lists the members.
Result<std::vector<Member>> readDirectory(const std::string &path,
                                          const uint8_t *file, size_t size) {
  auto fail = [&](const std::string &problem) {
    return Status::error(fmt::format("{}: {}", path, problem));
  };
  // The record is the last thing in the file, followed by a comment of at
  // most 65535 bytes.
  size_t record = SIZE_MAX;
  for (size_t back = kEndOfCentralDirectorySize;
       back <= size && back <= kEndOfCentralDirectorySize + 0xffff; ++back) {
    const uint8_t *candidate = file + size - back;
    if (load32(candidate) == kEndOfCentralDirectorySignature &&
        kEndOfCentralDirectorySize + load16(candidate + 20) == back) {
      record = size - back;
      break;
    }
  }
  if (record == SIZE_MAX)
    return fail("not a zip archive, or truncated (no end of central "
                "directory record)");
  const uint8_t *end = file + record;
  uint16_t count = load16(end + 10);
  uint32_t directorySize = load32(end + 12), directoryOffset = load32(end + 16);
  if ((record >= 20 && load32(file + record - 20) == kZip64LocatorSignature) ||
      count == 0xffff || directorySize == 0xffffffff ||
      directoryOffset == 0xffffffff)
    return fail("zip64 archives are not supported");
  if (load16(end + 4) != 0 || load16(end + 6) != 0 || load16(end + 8) != count)
    return fail("multi-disk zip archives are not supported");
  if (uint64_t(directoryOffset) + directorySize > record)
    return fail("corrupt zip archive: central directory out of range");

  std::vector<Member> members;
  std::set<std::string> names;
  size_t pos = directoryOffset, limit = directoryOffset + directorySize;
  for (uint16_t i = 0; i < count; ++i) {
    auto badEntry = [&] {
      return fail(fmt::format("corrupt zip archive: bad central directory "
                              "entry {} of {} at byte {}",
                              i + 1, count, pos));
    };
    if (limit - pos < kCentralHeaderSize ||
        load32(file + pos) != kCentralHeaderSignature)
      return badEntry();
    const uint8_t *entry = file + pos;
    size_t nameSize = load16(entry + 28);
    size_t variable = nameSize + load16(entry + 30) + load16(entry + 32);
    if (limit - pos - kCentralHeaderSize < variable)
      return badEntry();
    Member member{
        std::string(reinterpret_cast<const char *>(entry) + kCentralHeaderSize,
                    nameSize),
        load16(entry + 8),
        load16(entry + 10),
        load32(entry + 16),
        load32(entry + 20),
        load32(entry + 24),
        load32(entry + 42)};
    if (member.compressedSize == 0xffffffff || member.size == 0xffffffff ||
        member.localHeaderOffset == 0xffffffff)
      return fail("zip64 archives are not supported");
    // Readers differ on which of two same-named members they take.
    if (!names.insert(member.name).second)
      return fail(fmt::format("corrupt zip archive: two members are named '{}'",
                              member.name));
    members.push_back(std::move(member));
    pos += kCentralHeaderSize + variable;
  }
  return members;
}

/// The first bytes of a member's data and where they start in the archive,
/// once its local header agrees with the central directory.
Result<uint64_t> memberDataStart(const std::string &name, const Member &member,
                                 const uint8_t *file, size_t size) {
  auto fail = [&](const std::string &problem) {
    return Status::error(fmt::format("{}: {}", name, problem));
  };
  if (member.flags & 1)
    return fail("encrypted zip members are not supported");
  if (member.method != kStored && member.method != kDeflated)
    return fail(
        fmt::format("unsupported zip compression method {}", member.method));
  size_t local = member.localHeaderOffset;
  if (local > size || size - local < kLocalHeaderSize ||
      load32(file + local) != kLocalHeaderSignature)
    return fail(fmt::format(
        "corrupt zip archive: bad local header at byte {} (the central "
        "directory points there)",
        local));
  size_t nameSize = load16(file + local + 26);
  // Sizes come from the central directory: numpy's zipfile writes 0xffffffff
  // in the local header of small members (force_zip64).
  uint64_t dataStart =
      uint64_t(local) + kLocalHeaderSize + nameSize + load16(file + local + 28);
  if (dataStart > size || size - dataStart < member.compressedSize)
    return fail(fmt::format("truncated: member data ({} bytes from byte {}) "
                            "runs past the end of the archive ({} bytes)",
                            member.compressedSize, dataStart, size));
  // As Python's zipfile: the two headers must name the same member.
  if (std::string_view(reinterpret_cast<const char *>(file) + local +
                           kLocalHeaderSize,
                       nameSize) != member.name)
    return fail(fmt::format("corrupt zip archive: the local header at byte "
                            "{} names another member",
                            local));
  if (member.method == kStored && member.compressedSize != member.size)
    return fail("corrupt zip archive: stored member sizes differ");
  if (member.method == kDeflated &&
      member.size > kMaxDeflateRatio * member.compressedSize + 1024)
    return fail(fmt::format(
        "corrupt zip archive: {} compressed bytes cannot hold {} bytes",
        member.compressedSize, member.size));
  return dataStart;
}

/// Reads a member's bytes in order, once: stored bytes copied out of the
/// archive, deflated ones inflated; the CRC-32 accumulates as they pass.
class MemberReader {
public:
  MemberReader(const std::string &name, const Member &member,
               const uint8_t *data)
      : name_(name), member_(member), data_(data),
        inflater_(data, member.compressedSize, member.size, name) {}

  Status read(uint8_t *dst, size_t size) {
    if (size == 0) // `dst` may be null then (an empty array's data)
      return Status();
    if (member_.method == kStored) {
      std::memcpy(dst, data_ + done_, size);
    } else {
      MODELC_RETURN_IF_ERROR(inflater_.read(dst, size));
    }
    done_ += size;
    crc_ = crc32(crc_, dst, uInt(size));
    return Status();
  }

  /// Everything has been read: the stream ends here and the CRC matches.
  Status finish() {
    if (member_.method == kDeflated)
      MODELC_RETURN_IF_ERROR(inflater_.finish());
    if (uint32_t(crc_) != member_.crc)
      return Status::error(
          fmt::format("{}: corrupt zip archive: CRC-32 mismatch", name_));
    return Status();
  }

private:
  const std::string &name_;
  const Member &member_;
  const uint8_t *data_;
  RawInflater inflater_;
  size_t done_ = 0;
  uLong crc_ = crc32(0, nullptr, 0);
};

/// Reads the member's .npy header: the first bytes give its length, then
/// just that much more is read, however large the member claims to be.
Result<NpyHeader> readMemberHeader(MemberReader &reader, const Member &member,
                                   const std::string &name) {
  std::vector<uint8_t> prefix(std::min<size_t>(member.size, 12));
  MODELC_RETURN_IF_ERROR(reader.read(prefix.data(), prefix.size()));
  size_t wanted = prefix.size();
  if (prefix.size() >= 10 && prefix[6] >= 1 && prefix[6] <= 3) {
    size_t lengthSize = prefix[6] == 1 ? 2 : 4;
    uint64_t headerSize = 0;
    for (size_t i = 0; i < lengthSize && 8 + i < prefix.size(); ++i)
      headerSize |= uint64_t(prefix[8 + i]) << (8 * i);
    if (headerSize <= kMaxNpyHeaderBytes)
      wanted = std::min<uint64_t>(member.size, 8 + lengthSize + headerSize);
  }
  if (wanted > prefix.size()) {
    size_t have = prefix.size();
    prefix.resize(wanted);
    MODELC_RETURN_IF_ERROR(reader.read(prefix.data() + have, wanted - have));
  }
  return parseNpyHeaderPrefix(prefix.data(), prefix.size(), member.size, name);
}

/// Memory the inflated data of a member lives in: allocated once, its pages
/// touched only as the data arrives.
class InflatedBlob final : public Blob {
public:
  InflatedBlob(std::unique_ptr<uint8_t[]> bytes, size_t size)
      : Blob(bytes.get(), size), bytes_(std::move(bytes)) {}

private:
  std::unique_ptr<uint8_t[]> bytes_;
};

Status outOfMemory(const std::string &name, const Member &member,
                   const NpyHeader &header) {
  return Status::error(fmt::format(
      "{}: out of memory for the member's {} bytes of data (shape {} of {}, "
      "from {} compressed bytes)",
      name, header.dataBytes, formatShape(header.shape), header.descr,
      member.compressedSize));
}

std::string stripNpy(const std::string &name) {
  const std::string suffix = ".npy";
  if (name.size() >= suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    return name.substr(0, name.size() - suffix.size());
  return name;
}

/// numpy.load's NpzFile looks up "KEY.npy" first, then "KEY".
Result<const Member *> findMember(const std::string &path,
                                  const std::vector<Member> &members,
                                  const std::string &key) {
  for (const std::string &wanted : {key + ".npy", key})
    for (const Member &member : members)
      if (member.name == wanted)
        return &member;
  std::vector<std::string> keys;
  for (const Member &member : members)
    keys.push_back(stripNpy(member.name));
  return Status::error(fmt::format(
      "{}: no array named '{}' (the archive has: {})", path, key,
      keys.empty() ? "nothing" : fmt::format("{}", fmt::join(keys, ", "))));
}

/// Member `key`, read once. With `into`, its data goes there (and the
/// result's blob is null); without, a stored member's data stays in the
/// archive and a deflated one's is inflated into memory of its own.
Result<NpzArray> readArray(std::shared_ptr<const Blob> archive,
                           const std::string &path, const std::string &key,
                           const NpyHeaderCheck &check,
                           std::vector<uint8_t> *into) {
  const uint8_t *file = archive->data();
  size_t size = archive->size();
  Result<std::vector<Member>> members = readDirectory(path, file, size);
  if (!members)
    return members.status();
  Result<const Member *> found = findMember(path, *members, key);
  if (!found)
    return found.status();
  const Member &member = **found;
  std::string name = fmt::format("{}[{}]", path, member.name);
  Result<uint64_t> dataStart = memberDataStart(name, member, file, size);
  if (!dataStart)
    return dataStart.status();
  const uint8_t *data = file + *dataStart;

  MemberReader reader(name, member, data);
  Result<NpyHeader> header = readMemberHeader(reader, member, name);
  if (!header)
    return header.status();
  if (check)
    MODELC_RETURN_IF_ERROR(check(*header, name));
  NpzArray array{*header, nullptr, 0};
  uint8_t *dst;
  if (into) {
    try {
      into->resize(header->dataBytes);
    } catch (const std::bad_alloc &) {
      return outOfMemory(name, member, *header);
    }
    dst = into->data();
  } else if (member.method == kStored) {
    // In place: only the CRC needs the bytes read.
    uLong crc = crc32(0, data, uInt(member.size));
    if (uint32_t(crc) != member.crc)
      return Status::error(
          fmt::format("{}: corrupt zip archive: CRC-32 mismatch", name));
    array.blob = std::move(archive);
    array.offset = *dataStart + header->dataOffset;
    return array;
  } else {
    std::unique_ptr<uint8_t[]> bytes(new (std::nothrow)
                                         uint8_t[header->dataBytes]);
    if (!bytes)
      return outOfMemory(name, member, *header);
    dst = bytes.get();
    array.blob =
        std::make_shared<InflatedBlob>(std::move(bytes), header->dataBytes);
  }
  MODELC_RETURN_IF_ERROR(reader.read(dst, header->dataBytes));
  MODELC_RETURN_IF_ERROR(reader.finish());
  return array;
}

} // namespace

Result<std::vector<std::string>> listNpzKeys(const uint8_t *data, size_t size,
                                             const std::string &path) {
  Result<std::vector<Member>> members = readDirectory(path, data, size);
  if (!members)
    return members.status();
  std::vector<std::string> keys;
  for (const Member &member : *members)
    keys.push_back(stripNpy(member.name));
  return keys;
}

Result<NpzArray> readNpzArray(std::shared_ptr<const Blob> archive,
                              const std::string &path, const std::string &key,
                              const NpyHeaderCheck &check) {
  return readArray(std::move(archive), path, key, check, nullptr);
}

Result<NpyArray> readNpzMember(const std::string &path,
                               const std::string &key) {
  Result<std::shared_ptr<const Blob>> blob = mapFile(path);
  if (!blob)
    return blob.status();
  NpyArray array;
  Result<NpzArray> member =
      readArray(blob.take(), path, key, nullptr, &array.bytes);
  if (!member)
    return member.status();
  array.dtype = member->header.dtype;
  array.shape = member->header.shape;
  return array;
}

Status
writeNpz(const std::string &path,
         const std::vector<std::pair<std::string, NpyArrayView>> &arrays) {
  if (arrays.size() >= 0xffff)
    return Status::error(
        fmt::format("{}: too many arrays for a zip archive", path));
  std::set<std::string> keys;
  for (const auto &entry : arrays)
    if (!keys.insert(entry.first).second)
      return Status::error(
          fmt::format("{}: duplicate array name '{}'", path, entry.first),
          kExitInternal);
  Result<AtomicFile> file = AtomicFile::create(path);
  if (!file)
    return file.status();
  std::string directory;
  uint64_t offset = 0;
  for (const auto &[key, array] : arrays) {
    Result<std::string> header = encodeNpyHeader(array.dtype, array.shape);
    if (!header)
      return Status::error(fmt::format("{}: array '{}': {}", path, key,
                                       header.status().message()),
                           header.status().exitCode());
    std::string name = key + ".npy";
    uint64_t dataBytes = *checkedByteSize(array.shape, array.dtype);
    uint64_t size = header->size() + dataBytes;
    if (size >= 0xffffffff || offset >= 0xffffffff || name.size() > 0xffff)
      return Status::error(fmt::format(
          "{}: array '{}' is too large for a zip archive without zip64", path,
          key));
    uLong crc = crc32(0, reinterpret_cast<const Bytef *>(header->data()),
                      uInt(header->size()));
    crc = crc32(crc, static_cast<const Bytef *>(array.data), uInt(dataBytes));

    // Local header and central directory entry share most fields.
    std::string common;
    store16(common, kVersionNeeded);
    store16(common, 0); // flags
    store16(common, kStored);
    store16(common, kDosTime);
    store16(common, kDosDate);
    store32(common, uint32_t(crc));
    store32(common, uint32_t(size)); // compressed
    store32(common, uint32_t(size));
    store16(common, uint32_t(name.size()));
    store16(common, 0); // extra field length

    std::string local;
    store32(local, kLocalHeaderSignature);
    local += common + name + *header;
    MODELC_RETURN_IF_ERROR(file->write(local.data(), local.size()));
    MODELC_RETURN_IF_ERROR(file->write(array.data, dataBytes));

    store32(directory, kCentralHeaderSignature);
    store16(directory, kVersionMadeBy);
    directory += common;
    store16(directory, 0);                       // comment length
    store16(directory, 0);                       // disk number
    store16(directory, 0);                       // internal attributes
    store32(directory, uint32_t(0100644) << 16); // regular file, rw-r--r--
    store32(directory, uint32_t(offset));
    directory += name;
    offset += kLocalHeaderSize + name.size() + size;
  }
  if (offset >= 0xffffffff)
    return Status::error(
        fmt::format("{}: too large for a zip archive without zip64", path));
  std::string end;
  store32(end, kEndOfCentralDirectorySignature);
  store16(end, 0); // this disk
  store16(end, 0); // disk with the directory
  store16(end, uint32_t(arrays.size()));
  store16(end, uint32_t(arrays.size()));
  store32(end, uint32_t(directory.size()));
  store32(end, uint32_t(offset));
  store16(end, 0); // comment length
  MODELC_RETURN_IF_ERROR(file->write(directory.data(), directory.size()));
  MODELC_RETURN_IF_ERROR(file->write(end.data(), end.size()));
  return file->commit();
}

} // namespace modelc::rt
