// gpu-hold: holds all but N GiB of a GPU's memory, as a stand-in for a smaller card (to measure proofs on
// 16-24 GiB GPUs). Run it beside a bench on a big GPU (an 80-141 GiB H100/H200) to measure what a 16 or
// 24 GiB card would do: whether the proofs fit at all, which memory plan the backend picks from
// cudaMemGetInfo, and the peak device memory. What it does NOT reproduce: the real card's memory
// bandwidth, SM count and clocks (and its PCIe link), so its times are those of the big GPU, not of the
// small card. Standalone: no kiln headers; built by scripts/device/build-gpu-hold.sh into
// native/cuda/.build/gpu-hold, started by scripts/device/run-bench32.sh when KILN_GPU_LEAVE_GIB is set.
//
//   gpu-hold --leave GIB [--device N] [--stdin]   hold memory until at most GIB GiB are free
//   gpu-hold --hold GIB  [--device N] [--stdin]   hold exactly GIB GiB
//
// Plain cudaMalloc (never managed memory, which could be evicted), in pieces of at most 1 GiB, each
// touched with cudaMemset. When the memory is held, prints one line to stdout:
//   gpu-hold: device D (NAME): holding H GiB, F GiB free of T GiB
// then waits for SIGTERM/SIGINT (or, with --stdin, also for the end of its stdin), frees and exits 0.
// Errors (no GPU, bad arguments, a target above the free memory, an allocation failing more than ~64 MiB
// short of the target): one line on stderr, exit 2.
#include <cuda_runtime.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static constexpr double GiB = 1073741824.0;
static constexpr size_t kPiece = size_t(1) << 30;   // the largest single allocation
static constexpr size_t kGrain = size_t(2) << 20;   // the driver's allocation granularity (2 MiB)

[[noreturn]] static void fail(const std::string& msg) {
  std::fprintf(stderr, "gpu-hold: %s\n", msg.c_str());
  std::exit(2);
}

static void usage() {
  std::printf(
      "usage: gpu-hold --leave GIB [--device N] [--stdin]\n"
      "       gpu-hold --hold GIB [--device N] [--stdin]\n"
      "Holds device memory with cudaMalloc, as a stand-in for a smaller GPU (e.g. --leave 24 on an H200\n"
      "leaves about what a 24 GiB card has free). GIB may be fractional (GiB = 2^30 bytes).\n"
      "  --leave GIB  allocate until at most GIB GiB are free (within ~64 MiB)\n"
      "  --hold GIB   allocate exactly GIB GiB\n"
      "  --device N   the CUDA device (default 0; CUDA_VISIBLE_DEVICES applies)\n"
      "  --stdin      also release when stdin reaches EOF (otherwise only on SIGTERM/SIGINT)\n"
      "Prints 'gpu-hold: device D (NAME): holding H GiB, F GiB free of T GiB' once the memory is held.\n"
      "Differs from a real small card: bandwidth, SM count and clocks are still the big GPU's.\n");
}

static double parse_gib(const char* opt, const char* s) {
  char* end = nullptr;
  double v = s ? std::strtod(s, &end) : NAN;
  if (!s || end == s || *end != '\0' || !std::isfinite(v) || v < 0) fail(std::string(opt) + ": expected a number of GiB >= 0");
  return v;
}

static void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail(std::string(what) + ": " + cudaGetErrorString(e));
}

int main(int argc, char** argv) {
  double leave = -1, hold = -1;
  int device = 0;
  bool use_stdin = false;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--help" || a == "-h") { usage(); return 0; }
    else if (a == "--leave") { leave = parse_gib("--leave", next); i++; }
    else if (a == "--hold") { hold = parse_gib("--hold", next); i++; }
    else if (a == "--stdin") use_stdin = true;
    else if (a == "--device") {
      char* end = nullptr;
      long d = next ? std::strtol(next, &end, 10) : -1;
      if (!next || end == next || *end != '\0' || d < 0 || d > 1024) fail("--device: expected a device number >= 0");
      device = int(d);
      i++;
    } else fail("unknown argument " + a + " (see --help)");
  }
  if ((leave < 0) == (hold < 0)) fail("give one of --leave GIB or --hold GIB (see --help)");

  // SIGTERM/SIGINT are read from a signalfd: blocked before CUDA starts its threads (they inherit the
  // mask), and set back to their default first (a shell starts background jobs with SIGINT ignored).
  signal(SIGTERM, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  if (sigprocmask(SIG_BLOCK, &sigs, nullptr) != 0) fail("sigprocmask failed");
  int sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
  if (sfd < 0) fail("signalfd failed");

  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) fail(std::string("no GPU: ") + (e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device"));
  if (device >= count) fail("--device " + std::to_string(device) + ": only " + std::to_string(count) + " device(s)");
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaFree(nullptr), "creating the context");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  size_t free_b = 0, total_b = 0;
  check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");

  char buf[160];
  const double target = leave >= 0 ? leave : hold;
  if (target * GiB > double(free_b)) {
    std::snprintf(buf, sizeof buf, "%s %.2f GiB is above the free memory (%.2f GiB free of %.2f GiB)",
                  leave >= 0 ? "--leave" : "--hold", target, free_b / GiB, total_b / GiB);
    fail(buf);
  }
  const size_t leave_b = leave >= 0 ? size_t(leave * GiB) : 0;
  size_t left_to_hold = leave >= 0 ? 0 : size_t(hold * GiB);

  // Allocate piece by piece; with --leave, free memory is read again after each piece (the driver's
  // own overhead per allocation counts too), and the last piece is what remains, rounded to 2 MiB.
  std::vector<void*> pieces;
  size_t held = 0;
  for (;;) {
    size_t want;
    if (leave >= 0) {
      check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
      if (free_b <= leave_b) break;
      want = std::min(kPiece, (free_b - leave_b + kGrain - 1) / kGrain * kGrain);
    } else {
      if (left_to_hold == 0) break;
      want = std::min(kPiece, left_to_hold);
      left_to_hold -= want;
    }
    void* p = nullptr;
    e = cudaMalloc(&p, want);
    if (e != cudaSuccess) {
      cudaGetLastError();  // a failed cudaMalloc is not sticky; within 64 MiB of a --leave target is close enough
      if (leave >= 0 && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && free_b <= leave_b + (size_t(64) << 20)) break;
      std::snprintf(buf, sizeof buf, "cudaMalloc of %.0f MiB failed after holding %.2f GiB: %s", want / 1048576.0,
                    held / GiB, cudaGetErrorString(e));
      fail(buf);
    }
    check(cudaMemset(p, 0, want), "cudaMemset");
    pieces.push_back(p);
    held += want;
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  std::printf("gpu-hold: device %d (%s): holding %.2f GiB, %.2f GiB free of %.2f GiB\n", device, prop.name, held / GiB,
              free_b / GiB, total_b / GiB);
  std::fflush(stdout);

  // Wait for a signal, or (--stdin) the end of stdin.
  for (bool done = false; !done;) {
    pollfd fds[2] = {{sfd, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
    if (poll(fds, use_stdin ? 2 : 1, -1) < 0) continue;  // EINTR (e.g. SIGSTOP/SIGCONT)
    if (fds[0].revents & POLLIN) done = true;
    if (use_stdin && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      char sink[4096];
      ssize_t n = read(STDIN_FILENO, sink, sizeof sink);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) done = true;
    }
  }
  for (void* p : pieces) cudaFree(p);
  return 0;
}
