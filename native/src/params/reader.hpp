// bellperson `.params` files read straight into native memory (host only, no N-API here: the calls
// paramsInspect / paramsDecode in addon.cpp are its glue; contract in native/API.md, "Parameter
// files"). The TypeScript reader (src/groth16/keys.ts) is the slow twin; the messages use its
// wording, so both name the same section and the same numbers.
//
//   .params = vk ‖ h ‖ l ‖ a ‖ b_g1 ‖ b_g2
//   vk      = α_g1 ‖ β_g1 ‖ β_g2 ‖ γ_g2 ‖ δ_g1 ‖ δ_g2 (uncompressed: 96 / 192 B) ‖ u32 BE n ‖ n IC points
//   section = u32 BE count ‖ count uncompressed points (G1 96 B; b_g2: G2 192 B)
//
// `inspect` walks the count fields with small preads and checks every count against the bytes that
// remain BEFORE anything is allocated or decoded (a truncated file, a count that disagrees with the
// length, b_g2 ≠ b_g1, trailing bytes), so a 47 GB official file is validated in microseconds.
// `read_points` then reads one range of a section into `dst` and decodes it there: the range is cut
// into pieces of ~768 KiB, each read (pread) and decoded in place by one task of the thread pool, so
// reading and decoding run on every core and no buffer besides `dst` is used (a wire point and a
// native point have the same size).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "../codec/zcash.hpp"

namespace kiln {
namespace params {

// A malformed, truncated or inconsistent file: `section` is 'vk.alpha_g1' … 'vk.ic', 'h', 'l', 'a',
// 'b_g1', 'b_g2', 'end' (trailing bytes) or 'file' (I/O); what() is the detail (numbers included).
struct FormatError : std::runtime_error {
  std::string section;
  FormatError(std::string s, const std::string& detail) : std::runtime_error(detail), section(std::move(s)) {}
};

constexpr size_t kG1Wire = 96, kG2Wire = 192;
constexpr uint64_t kVkFixedBytes = 3 * kG1Wire + 3 * kG2Wire;  // 864
// More IC points than this are refused (the verifying key is parsed in JS memory; a Filecoin circuit
// has at most a few hundred public inputs).
constexpr uint64_t kMaxIc = uint64_t(1) << 24;

struct SectionInfo {
  const char* name = "";  // h l a b_g1 b_g2
  int group = 1;          // 1 = G1, 2 = G2
  uint64_t count = 0;
  uint64_t offset = 0;    // file offset of the first point (after the count field)
};

struct Layout {
  uint64_t size = 0;        // file bytes
  std::vector<uint8_t> vk;  // the verifying key as stored (fixed points, IC count, IC points)
  uint64_t ic = 0;          // IC points
  SectionInfo sections[5];
};

Layout inspect(const std::string& path);

// Reads points [0, count) of `group` starting at file byte `offset` into dst (count native points)
// and decodes them in place on the pool. `expected_size`: the size inspect saw (a file that changed
// since is refused). Returns the lowest bad point (index within this range) or index SIZE_MAX;
// `check`: kCheck* bits (zcash.hpp). I/O problems throw FormatError(section, …).
DecodeFault read_points(const std::string& path, uint64_t expected_size, const std::string& section, int group,
                        uint64_t offset, uint64_t count, uint8_t* dst, int check);

}  // namespace params
}  // namespace kiln
