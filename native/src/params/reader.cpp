// See reader.hpp.
#include "reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace kiln {
namespace params {
namespace {

std::string num(uint64_t v) { return std::to_string(v); }

// An open file descriptor, closed on scope exit.
struct File {
  int fd = -1;
  uint64_t size = 0;
  explicit File(const std::string& path) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw FormatError("file", std::string("cannot open: ") + std::strerror(errno));
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      const int e = errno;
      ::close(fd);
      throw FormatError("file", std::string("cannot stat: ") + std::strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      throw FormatError("file", "not a regular file");
    }
    size = (uint64_t)st.st_size;
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File() { ::close(fd); }
};

// Reads n bytes at `at`; returns the bytes read (fewer only at the end of the file).
size_t pread_full(int fd, uint8_t* buf, size_t n, uint64_t at, const std::string& section) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, buf + got, n - got, (off_t)(at + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw FormatError(section, "read failed at byte " + num(at + got) + ": " + std::strerror(errno));
    }
    if (r == 0) break;
    got += (size_t)r;
  }
  return got;
}

uint32_t be32(const uint8_t* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

const char* const kVkNames[6] = {"vk.alpha_g1", "vk.beta_g1", "vk.beta_g2", "vk.gamma_g2", "vk.delta_g1", "vk.delta_g2"};
const uint64_t kVkSizes[6] = {kG1Wire, kG1Wire, kG2Wire, kG2Wire, kG1Wire, kG2Wire};
const char* const kSections[5] = {"h", "l", "a", "b_g1", "b_g2"};

// Bytes a pool task reads and decodes at once (a multiple of both point sizes); with the subgroup
// check (~10^3 times a conversion per point) pieces are small, so every core gets some.
constexpr size_t kPieceBytes = size_t(768) << 10;
constexpr size_t kPieceBytesChecked = 64 * kG2Wire;

template <class W>
void decode_piece(uint8_t* p, size_t n, size_t first, int check, std::atomic<size_t>& lowest, DecodeFault& out) {
  const typename W::F b = W::b();
  for (size_t i = 0; i < n; i++) {
    if (first + i > lowest.load(std::memory_order_relaxed)) return;  // an earlier point already failed
    int coord = 0;
    uint8_t* q = p + i * W::WIRE;
    // In place: decode_one reads the whole wire point before it writes the native one.
    const PointFault f = zcash::decode_one<W>(q, q, check, b, coord);
    if (f != PointFault::None) {
      out = {first + i, f, coord};
      size_t cur = lowest.load();
      while (first + i < cur && !lowest.compare_exchange_weak(cur, first + i)) {
      }
      return;
    }
  }
}

}  // namespace

Layout inspect(const std::string& path) {
  Layout L;
  File f(path);
  const uint64_t size = f.size;
  L.size = size;
  if (size < kVkFixedBytes) {
    uint64_t end = 0;
    const char* sec = kVkNames[0];
    for (int k = 0; k < 6; k++) {
      end += kVkSizes[k];
      if (end > size) {
        sec = kVkNames[k];
        break;
      }
    }
    throw FormatError(sec, "truncated: " + num(size) + " bytes, the verifying key's fixed points need " + num(kVkFixedBytes));
  }
  uint64_t pos = kVkFixedBytes;
  auto count_at = [&](const std::string& section) -> uint64_t {
    const uint64_t left = size - pos;
    if (left < 4) throw FormatError(section, "truncated: the data ends before the point count (" + num(left) + " of 4 bytes left)");
    uint8_t b[4];
    if (pread_full(f.fd, b, 4, pos, section) != 4)
      throw FormatError(section, "unexpected end of data: the file shrank while it was read");
    pos += 4;
    return be32(b);
  };
  auto room = [&](const std::string& section, uint64_t count, uint64_t wire) {
    const uint64_t need = count * wire, left = size - pos;
    if (need > left)
      throw FormatError(section, "count " + num(count) + " needs " + num(need) + " bytes (" + num(count) + " \u00d7 " +
                                     num(wire) + ") but only " + num(left) + " remain: truncated or inconsistent");
  };
  const uint64_t ic = count_at("vk.ic");
  if (ic == 0) throw FormatError("vk.ic", "count 0: there must be an IC point for ONE at least");
  room("vk.ic", ic, kG1Wire);
  if (ic > kMaxIc)
    throw FormatError("vk.ic", "count " + num(ic) + " exceeds " + num(kMaxIc) + " public inputs: not the verifying key of a circuit kiln proves");
  L.ic = ic;
  pos += ic * kG1Wire;
  L.vk.resize((size_t)pos);
  if (pread_full(f.fd, L.vk.data(), L.vk.size(), 0, "vk.ic") != L.vk.size())
    throw FormatError("vk.ic", "unexpected end of data: the file shrank while it was read");
  for (int s = 0; s < 5; s++) {
    SectionInfo& si = L.sections[s];
    si.name = kSections[s];
    si.group = s == 4 ? 2 : 1;
    const uint64_t wire = si.group == 1 ? kG1Wire : kG2Wire;
    si.count = count_at(si.name);
    room(si.name, si.count, wire);
    if (s == 4 && si.count != L.sections[3].count)
      throw FormatError(si.name, "count " + num(si.count) + " differs from the b_g1 count " + num(L.sections[3].count) +
                                     " (the same selection of variables)");
    si.offset = pos;
    pos += si.count * wire;
  }
  if (pos != size) throw FormatError("end", num(size - pos) + " trailing bytes after the b_g2 section: inconsistent counts");
  return L;
}

DecodeFault read_points(const std::string& path, uint64_t expected_size, const std::string& section, int group,
                        uint64_t offset, uint64_t count, uint8_t* dst, int check) {
  const size_t wire = group == 1 ? kG1Wire : kG2Wire;
  File f(path);
  if (f.size != expected_size)
    throw FormatError(section, "the file changed since its layout was checked (" + num(expected_size) + " bytes then, " +
                                   num(f.size) + " now)");
  if (offset > f.size || count > (f.size - offset) / wire)
    throw FormatError(section, "points [" + num(offset) + ", +" + num(count) + " \u00d7 " + num(wire) +
                                   ") lie beyond the end of the file (" + num(f.size) + " bytes)");
  DecodeFault none;
  if (count == 0) return none;
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(f.fd, (off_t)offset, (off_t)(count * wire), POSIX_FADV_SEQUENTIAL);
#endif
  const size_t per = ((check & kCheckSubgroup) ? kPieceBytesChecked : kPieceBytes) / wire;
  const size_t pieces = (size_t)((count + per - 1) / per);
  std::atomic<size_t> lowest{SIZE_MAX};
  std::vector<DecodeFault> faults(pieces);
  std::mutex io_mu;
  std::string io_error;  // the I/O failure of the lowest piece that had one
  size_t io_piece = SIZE_MAX;
  pool().parallel_for(pieces, [&](size_t t) {
    const size_t first = t * per, n = (size_t)std::min<uint64_t>(per, count - first);
    if (first > lowest.load(std::memory_order_relaxed)) return;
    uint8_t* p = dst + first * wire;
    const uint64_t at = offset + first * wire;
    std::string err;
    try {
      const size_t got = pread_full(f.fd, p, n * wire, at, section);
      if (got != n * wire)
        err = "unexpected end of data at byte " + num(at + got) + ": wanted " + num(n * wire) + " bytes, " + num(got) +
              " available (the file shrank while it was read)";
    } catch (const FormatError& e) {
      err = e.what();
    }
    if (!err.empty()) {
      std::lock_guard<std::mutex> g(io_mu);
      if (t < io_piece) io_piece = t, io_error = err;
      return;
    }
    if (group == 1) decode_piece<zcash::G1Wire>(p, n, first, check, lowest, faults[t]);
    else decode_piece<zcash::G2Wire>(p, n, first, check, lowest, faults[t]);
  });
  DecodeFault best;
  for (const DecodeFault& fl : faults)
    if (fl.index < best.index) best = fl;
  // A read failure before the first bad point wins (the points after it were never looked at).
  if (io_piece != SIZE_MAX && (best.index == SIZE_MAX || io_piece * per <= best.index)) throw FormatError(section, io_error);
  return best;
}

}  // namespace params
}  // namespace kiln
