// Warming a device ahead of a circuit's first proof (ntt.cu; the addon's warmDevice, called when
// PreloadSRS loads a circuit): the NTT's twiddle table for its domain made, and the stream-ordered
// pool grown by `vectors` allocations of one domain vector each (2^log_n Fr: the quotient's buffers
// and the prefetched witness), freed back into the pool at once. The pool keeps what it reserved
// (release threshold unlimited), so the first proof's ntt_h no longer pays for growing it.
#pragma once
#include <cstddef>

namespace kiln {
namespace cuda {

void warm_device(int dev, unsigned log_n, unsigned vectors);

}  // namespace cuda
}  // namespace kiln
