#include "core/capture/device_match.h"

#include <cctype>
#include <cstdio>

namespace sl::capture {
namespace {

// The UUID's hex digits alone, lower case: "GPU-AbC…" and "abc…" compare equal.
std::string uuid_key(std::string_view uuid) {
  for (std::string_view prefix : {"GPU-", "MIG-", "gpu-", "mig-"})
    if (uuid.starts_with(prefix)) uuid.remove_prefix(prefix.size());
  std::string key;
  for (char c : uuid)
    if (std::isxdigit(static_cast<unsigned char>(c))) key += char(std::tolower(static_cast<unsigned char>(c)));
  return key;
}

}  // namespace

std::string format_gpu_uuid(const uint8_t (&b)[16]) {
  char text[48];
  std::snprintf(text, sizeof text,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3],
                b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

std::vector<int> cuda_ordinals_for_nvml(const std::vector<std::string>& nvml_uuids,
                                        const std::vector<std::string>& cuda_uuids) {
  std::vector<int> ordinals(nvml_uuids.size(), -1);
  for (size_t i = 0; i < nvml_uuids.size(); ++i) {
    std::string key = uuid_key(nvml_uuids[i]);
    if (key.empty()) continue;
    for (size_t c = 0; c < cuda_uuids.size(); ++c)
      if (uuid_key(cuda_uuids[c]) == key) ordinals[i] = int(c);
  }
  return ordinals;
}

}  // namespace sl::capture
