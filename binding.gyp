# kiln native addon (CPU backend). Built by `npm install` / `npm ci` (node-gyp rebuild), offline,
# against Node's own headers.
#
# Layout: native/src/{ff,ec,msm,ntt,sparse,util} are header-only arithmetic (KILN_HD marks what is
# host+device); kernels_*.cpp instantiate the host entry points (kernels_ec.cpp: one template for
# G1 and G2); params/reader.cpp reads .params files into native memory (pread + decode on the pool);
# addon.cpp holds the CPU backend's calls over the shared N-API glue (native/napi/).
# The CUDA addon (native/cuda/, nvcc) is a separate build: scripts/device/build-cuda.sh
# (`npm run build:cuda`, into build/cuda/kiln_cuda.node); nothing here needs CUDA.
#
# -march is deliberately not set: machines differ. native/src/tools/cpu-flags.cjs adds -mbmi2 -madx
# only when the building CPU has them (the code checks __BMI2__/__ADX__ and has a portable path);
# KILN_PORTABLE=1 disables that. The AVX-512 IFMA kernels (MSMs, NTT, quotient) are two translation
# units in their own static library, the only code compiled with -mavx512f -mavx512ifma, and only
# when the building CPU has them; kernels_ec.cpp and kernels_fr.cpp call them after checking the running CPU.
{
  "targets": [
    {
      "target_name": "kiln_ifma",
      "type": "static_library",
      "sources": ["native/src/kernels_ifma.cpp", "native/src/kernels_fr_ifma.cpp"],
      "include_dirs": ["native/src"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags": ["-fPIC", "-pthread"],
      "cflags_cc": ["-O3", "-std=gnu++17", "-fexceptions", "-fPIC", "-pthread", "-Wno-maybe-uninitialized",
                    "<!@(node native/src/tools/cpu-flags.cjs)", "<!@(node native/src/tools/cpu-flags.cjs --ifma)"]
    },
    {
      "target_name": "kiln_native",
      "dependencies": ["kiln_ifma"],
      "sources": [
        "native/src/addon.cpp",
        "native/src/kernels_ec.cpp",
        "native/src/kernels_fr.cpp",
        "native/src/params/reader.cpp"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "native/src"
      ],
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_CPP_EXCEPTIONS",
        "NODE_ADDON_API_CPP_EXCEPTIONS_ALL",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS",
        "KILN_VERSION=\"0.1.0\""
      ],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags": ["-fexceptions", "-pthread"],
      "cflags_cc": ["-O3", "-std=gnu++17", "-fexceptions", "-pthread", "<!@(node native/src/tools/cpu-flags.cjs)"],
      "ldflags": ["-pthread"],
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "OTHER_CPLUSPLUSFLAGS": ["-O3"]
      },
      "msvs_settings": {
        "VCCLCompilerTool": { "ExceptionHandling": 1 }
      }
    }
  ]
}
