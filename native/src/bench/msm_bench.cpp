// Standalone C++ benchmark of the host kernels, for profiling without Node (perf record, callgrind).
// Not part of the addon build:
//   g++ -O3 -g -std=c++17 $(node native/src/tools/cpu-flags.cjs) -Inative/src \
//       native/src/bench/msm_bench.cpp -o /tmp/msm_bench -lpthread
//   /tmp/msm_bench [log2 n = 16] [threads = 1] [window c = auto]
// Prints wall and process CPU time (on a shared machine, CPU time / threads estimates idle wall).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>

#include "../kernels.hpp"
#include "../msm/fixed_base.hpp"
#include "../ntt/ntt.hpp"

using namespace kiln;

namespace {

// The BLS12-381 G1 generator (canonical coordinates).
const u64 kGx[6] = {0xfb3af00adb22c6bbULL, 0x6c55e83ff97a1aefULL, 0xa14e3a3f171bac58ULL,
                    0xc3688c4f9774b905ULL, 0x2695638c4fa9ac0fULL, 0x17f1d3a73197d794ULL};
const u64 kGy[6] = {0x0caa232946c5e7e1ULL, 0xd03cc744a2888ae4ULL, 0x00db18cb2c04b3edULL,
                    0xfcf5e095d5d00af6ULL, 0xa09e30ed741d8ae4ULL, 0x08b3f481e3aaa0f1ULL};

struct Timer {
  std::chrono::steady_clock::time_point w = std::chrono::steady_clock::now();
  clock_t c = clock();
  void print(const char* what) const {
    const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w).count();
    const double cpu = double(clock() - c) * 1000.0 / CLOCKS_PER_SEC;
    std::printf("%-28s wall %8.1f ms   cpu %8.1f ms\n", what, wall, cpu);
  }
};

}  // namespace

int main(int argc, char** argv) {
  const unsigned log_n = argc > 1 ? unsigned(std::atoi(argv[1])) : 16;
  const unsigned threads = argc > 2 ? unsigned(std::atoi(argv[2])) : 1;
  const unsigned window = argc > 3 ? unsigned(std::atoi(argv[3])) : 0;
  const size_t n = size_t(1) << log_n;
  pool().resize(threads);
  std::mt19937_64 rng(1);
  auto rand_fr = [&] {
    u64 v[4] = {rng(), rng(), rng(), rng() >> 4};
    return Fr::from_canonical(v);
  };
  std::vector<Fr> t(n), s(n);
  for (auto& x : t) x = rand_fr();
  for (auto& x : s) x = rand_fr();
  const G1Affine g{Fq::from_canonical(kGx), Fq::from_canonical(kGy)};
  std::vector<G1Affine> bases(n);
  {
    Timer tm;
    fixed_base_mul<Fq>(g, t.data(), n, bases.data(), pool());
    tm.print("fixed-base G1");
  }
  std::vector<Scalar256> sc(n);
  std::vector<u32> idx(n);
  for (size_t i = 0; i < n; i++) {
    s[i].to_canonical(sc[i].v);
    idx[i] = u32(i);
  }
  const unsigned c = window ? window : msm_pick_window(n);
  std::printf("n = 2^%u, %u threads, window c = %u\n", log_n, threads, c);
  for (int rep = 0; rep < 3; rep++) {
    Timer tm;
    const G1Affine r = pippenger<Fq>(bases.data(), idx.data(), sc.data(), n, pool(), c).to_affine();
    tm.print("pippenger G1");
    if (rep == 0) std::printf("  result x[0] = %016llx\n", (unsigned long long)r.x.v[0]);
  }
  {
    std::vector<Fr> a(s);
    Timer tm;
    ntt(a.data(), log_n, false, false, pool());
    tm.print("ntt");
  }
  return 0;
}
