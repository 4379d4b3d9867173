// Host-side arithmetic of the CUDA backend, compiled by the host compiler with the CPU addon's
// headers (native/src): the few field constants a transform needs, and the Horner combination of
// the MSM windows (W·c doublings: cheaper on the CPU than as one GPU thread). Also the device memory
// query of the daemon's status (mem_info).
#include <cstring>
#include <string>

#include "../src/ec/xyzz.hpp"
#include "../src/ff/bls12_381.hpp"
#include "kiln_cuda.hpp"

namespace kiln {
namespace cuda {

FrConsts fr_consts(unsigned log_n) {
  FrConsts c;
  Fr omega;
  for (int i = 0; i < 4; i++) omega.v[i] = FrParams::ROOT_2_32[i];
  for (unsigned i = log_n; i < 32; i++) omega = omega.sqr();
  const Fr n = Fr::from_u64(u64(1) << log_n);
  Fr g;
  for (int i = 0; i < 4; i++) g.v[i] = FrParams::COSET_GEN[i];
  Fr gn = g;
  for (unsigned i = 0; i < log_n; i++) gn = gn.sqr();
  const Fr z = gn - Fr::one();
  const Fr ni = n.inverse(), gi = g.inverse(), zi = z.inverse();
  std::memcpy(c.omega, omega.v, 32);
  std::memcpy(c.n_inv, ni.v, 32);
  std::memcpy(c.g, g.v, 32);
  std::memcpy(c.g_inv, gi.v, 32);
  std::memcpy(c.z_inv, zi.v, 32);
  return c;
}

template <class F>
static void finish(const void* windows, unsigned W, unsigned c, const void* ones, void* out) {
  const Xyzz<F>* w = static_cast<const Xyzz<F>*>(windows);
  Xyzz<F> acc = Xyzz<F>::identity();
  for (unsigned i = W; i-- > 0;) {
    for (unsigned k = 0; k < c; k++) acc = acc.dbl();
    acc = acc.add(w[i]);
  }
  acc = acc.add(*static_cast<const Xyzz<F>*>(ones));
  const Affine<F> a = acc.to_affine();
  std::memcpy(out, &a, sizeof a);
}

void finish_msm(int curve, const void* windows, unsigned W, unsigned c, const void* ones, void* out) {
  if (curve == 1) finish<Fq>(windows, W, c, ones, out);
  else finish<Fq2>(windows, W, c, ones, out);
}

}  // namespace cuda
}  // namespace kiln

// cudart's C entry points, declared here because this unit is compiled by the host compiler without
// the CUDA headers (cuda_runtime_api.h: cudaError_t is an int-sized enum, 0 = cudaSuccess). nvcc
// links cudart into the addon.
extern "C" {
int cudaSetDevice(int device);
int cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes);
const char* cudaGetErrorName(int error);
}

namespace kiln {
namespace cuda {

DeviceMemory mem_info(int dev) {
  // No device lock: the query neither launches work nor waits for the device's stream, so a status
  // poll never queues behind a proof. cudaSetDevice only changes the calling thread's current device
  // (every other entry point sets its own).
  int e = cudaSetDevice(dev);
  DeviceMemory m;
  if (e == 0) e = cudaMemGetInfo(&m.free_bytes, &m.total_bytes);
  if (e != 0) throw Error(std::string("CUDA error ") + cudaGetErrorName(e) + " in cudaMemGetInfo (device " + std::to_string(dev) + ")");
  return m;
}

}  // namespace cuda
}  // namespace kiln
