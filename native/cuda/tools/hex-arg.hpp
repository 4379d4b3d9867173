// The host checks' arguments: a point's bytes in the native layout from hex (the test writes the generators
// with the TypeScript encoder). Shared by field-host-check.cpp and msm-affine-host-check.cpp.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>

template <class T>
inline T from_hex(const char* h) {
  T t;
  unsigned char* o = reinterpret_cast<unsigned char*>(&t);
  if (std::strlen(h) != 2 * sizeof(T)) {
    std::printf("FAIL argument: %zu hex digits, expected %zu\n", std::strlen(h), 2 * sizeof(T));
    std::exit(2);
  }
  for (size_t k = 0; k < sizeof(T); k++) {
    unsigned v = 0;
    std::sscanf(h + 2 * k, "%2x", &v);
    o[k] = (unsigned char)v;
  }
  return t;
}
