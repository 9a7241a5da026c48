#include "core/present/series_palette.h"

namespace sl::present {

Rgb series_rgb(size_t index, bool dark) {
  static constexpr Rgb kOkabeIto[kSeriesColors] = {
      {0, 114, 178}, {230, 159, 0}, {0, 158, 115}, {213, 94, 0}, {204, 121, 167}, {86, 180, 233}, {0, 0, 0}};
  Rgb c = kOkabeIto[index % kSeriesColors];
  return dark && c == Rgb{0, 0, 0} ? Rgb{235, 235, 235} : c;
}

Rgb rest_rgb() { return {160, 160, 160}; }

}  // namespace sl::present
