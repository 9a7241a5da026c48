// Which NVML device is which CUDA device. NVML numbers GPUs by PCI order, CUDA by its own order
// after CUDA_VISIBLE_DEVICES (which can hide and reorder GPUs), so index i is not the same GPU
// in both. Both name a GPU by its UUID: match on that. Pure, so it is tested without a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sl::capture {

// The 16 UUID bytes as NVML writes them: "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lower case.
std::string format_gpu_uuid(const uint8_t (&bytes)[16]);

// For each NVML device (by index), the CUDA ordinal with the same UUID, or -1 when the program
// cannot see that GPU. Comparison ignores case and a "GPU-"/"MIG-" prefix on either side.
std::vector<int> cuda_ordinals_for_nvml(const std::vector<std::string>& nvml_uuids,
                                        const std::vector<std::string>& cuda_uuids);

}  // namespace sl::capture
