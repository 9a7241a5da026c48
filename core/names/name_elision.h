// Names cut to a column's width, in the middle, keeping what tells them apart.
//
// A text table fits the terminal by eliding its name columns (text tables only: JSON and CSV
// keep names whole). A name wider than the column keeps its head and its tail, joined by "…":
// the tail is where template variants differ, so it gets the larger part. Two things survive
// every cut:
//   - the tile of an AMD Tensile GEMM (`Cijk_Alik_Bljk_..._MT256x192x64_MI16x16x1_...`): the
//     `MT…` field is what a reader tells those kernels apart by, and it sits in the middle;
//   - distinctness: names distinct before the cut stay distinct after it. Where two cuts would
//     read the same, the part where the names first differ is kept too; where even that does not
//     tell them apart, those names are shown whole (wider than the column, never ambiguous).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sl {

// Characters on screen, not bytes: "µs" and "…" are two and three bytes, one column each.
size_t display_width(std::string_view s);

// `names` (already short, core/names/short_names.h) cut to at most `width` columns each where
// possible; the result is parallel to `names` and distinct wherever `names` is.
std::vector<std::string> elide_names(const std::vector<std::string>& names, size_t width);

// Lists of names (a fusion chain, a kernel pattern), each joined with `sep`, cut to `width` at
// whole names: the first and last names that fit, and how many are left out between
// ("a|b|… 3 more …|f"). Lists that would still read alike, and lists whose names do not fit one
// at a time, are cut as names are.
std::vector<std::string> elide_lists(const std::vector<std::vector<std::string>>& lists, size_t width, char sep = '|');

}  // namespace sl
