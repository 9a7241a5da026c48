// Names cut to a column (core/names/name_elision.h) and text tables that fit the terminal
// (append_text_table with a TextLayout).
#include <set>

#include "core/analysis/report_tables.h"
#include "core/names/name_elision.h"
#include "tests/unit/test_support.h"

using namespace sl;
using sl::analysis::Cell;
using sl::analysis::Table;

namespace {

// Two of the Tensile GEMMs of the MI300 BERT trace: alike but for their tile and a few fields.
const std::string kTensileA =
    "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_"
    "DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA256_LBSPPB256_LBSPPM0_LPA16_LPB16_"
    "LPM0_LRVW8_LWPMn1_MIAV0_MIWT1_1_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_"
    "SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_"
    "WS64_WG16_4_4";
const std::string kTensileB =
    "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x256_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_"
    "DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA512_LBSPPB512_LBSPPM0_LPA16_LPB16_"
    "LPM0_LRVW8_LWPMn1_MIAV0_MIWT1_1_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_"
    "SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_"
    "WS64_WG16_4_4";

size_t longest_line(const std::string& text) {
  size_t longest = 0, from = 0;
  for (size_t nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1)
    longest = std::max(longest, display_width(std::string_view(text).substr(from, nl - from)));
  return longest;
}

Table kernel_table(const std::vector<std::string>& names) {
  Table t("kernel_breakdown", {"name", "count", "sum_us", "mean_us"});
  for (size_t i = 0; i < names.size(); ++i)
    t.rows.push_back({Cell::str(names[i]), Cell::integer(int64_t(i + 1)), Cell::ns(int64_t(1000 * (i + 1))),
                      Cell::ns(int64_t(1000))});
  return t;
}

}  // namespace

TEST_CASE("name elision: short names stay, long ones are cut in the middle to the width") {
  std::vector<std::string> out = elide_names({"attn_fwd", std::string(200, 'a') + "_tail_that_differs"}, 40);
  CHECK(out[0] == "attn_fwd");
  CHECK(display_width(out[1]) <= 40);
  CHECK(out[1].find("…") != std::string::npos);
  CHECK(out[1].ends_with("_tail_that_differs"));  // the tail, where variants differ, is kept
  CHECK(out[1].starts_with("aaaa"));
}

TEST_CASE("name elision: a Tensile GEMM keeps its MT tile, and two alike stay distinct") {
  std::vector<std::string> out = elide_names({kTensileA, kTensileB}, 60);
  CHECK(display_width(out[0]) <= 60);
  CHECK(display_width(out[1]) <= 60);
  // Were cut to a head and a tail alone: the tile, in the middle of the name, was lost.
  CHECK(out[0].find("MT16x16x128") != std::string::npos);
  CHECK(out[1].find("MT16x16x256") != std::string::npos);
  CHECK(out[0].starts_with("Cijk_Alik_Bljk_"));
  CHECK(out[0] != out[1]);
}

TEST_CASE("name elision: names that differ only in the middle keep where they differ") {
  std::string head(80, 'h'), tail(80, 't');
  std::vector<std::string> names = {head + "_variant_one_" + tail, head + "_variant_two_" + tail, head + "_variant_six_" + tail};
  std::vector<std::string> out = elide_names(names, 50);
  std::set<std::string> distinct(out.begin(), out.end());
  CHECK(distinct.size() == 3);
  for (const auto& s : out) CHECK(display_width(s) <= 50);
  CHECK(out[0].find("one") != std::string::npos);
}

TEST_CASE("name elision: never splits a UTF-8 character") {
  std::string name;
  for (int i = 0; i < 60; ++i) name += "é→";
  std::string out = elide_names({name}, 21)[0];
  CHECK(display_width(out) <= 21);
  for (size_t i = 0; i < out.size(); ++i)  // a cut inside a character leaves a lone continuation byte
    if ((static_cast<unsigned char>(out[i]) & 0xC0) == 0x80) CHECK(i > 0);
  CHECK(out.find("…") != std::string::npos);
}

TEST_CASE("name elision: lists are cut at whole names, the first kept, the left-out counted") {
  std::vector<std::string> chain = {"fft2d_r2c_32x32<5u>", "at::native::elementwise_kernel", "cudnn::ops::nchwToNhwcKernel",
                                    "at::native::max_pool_forward_nchw", "ampere_sgemm_32x32_sliced1x4_tn"};
  std::vector<std::string> shorter(chain.begin(), chain.end() - 1);
  std::vector<std::string> out = elide_lists({chain, shorter}, 90);
  CHECK(out[0].starts_with("fft2d_r2c_32x32<5u>|"));
  CHECK(out[0].find(" more …") != std::string::npos);
  CHECK(display_width(out[0]) <= 90);
  CHECK(out[0] != out[1]);
  CHECK(elide_lists({{"a", "b"}}, 90)[0] == "a|b");
  // A first name wider than the column (a mangled cutlass kernel) is cut too, and the lists of 7
  // and 6 names stay apart by their counts (were printed whole: 2,050 columns).
  std::string mangled = "_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolution" + std::string(300, 'E') + "vNT_6ParamsE";
  std::vector<std::string> seven(7, "at::native::multi_tensor_apply_kernel"), six(6, "at::native::multi_tensor_apply_kernel");
  seven[0] = six[0] = mangled;
  std::vector<std::string> cut = elide_lists({seven, six}, 100);
  CHECK(display_width(cut[0]) <= 100);
  CHECK(display_width(cut[1]) <= 100);
  CHECK(cut[0] != cut[1]);
  CHECK(cut[0].find("more …") != std::string::npos);
}

TEST_CASE("text table: long kernel names are cut to fit the layout's width; --wide prints them whole") {
  Table t = kernel_table({kTensileA, kTensileB, "attn_fwd"});
  std::string fitted;
  analysis::append_text_table(fitted, t, SIZE_MAX, 60, {100, false});
  CHECK(longest_line(fitted) <= 100);  // was 339 columns: names were padded to the longest one
  CHECK(fitted.find("MT16x16x128") != std::string::npos);
  CHECK(fitted.find("MT16x16x256") != std::string::npos);
  CHECK(fitted.find("--wide") != std::string::npos);
  std::string wide;
  analysis::append_text_table(wide, t, SIZE_MAX, 60, {100, true});
  CHECK(wide.find(kTensileA) != std::string::npos);
  CHECK(wide.find(kTensileB) != std::string::npos);
  // CSV keeps full names whatever the width.
  CHECK(analysis::render_csv(t).find(kTensileA) != std::string::npos);
}

TEST_CASE("text table: a diff's call path is cut in the middle, its leaf kept, not cut off at the end") {
  Table t("regressions", {"path", "delta_us"});
  std::string path = "ProfilerStep#6";
  for (int i = 0; i < 12; ++i) path += " > aten::some_wrapper_op_" + std::to_string(i);
  path += " > aten::cudnn_convolution";
  t.rows.push_back({Cell::str(path), Cell::ns(int64_t(916000))});
  std::string out;
  analysis::append_text_table(out, t, SIZE_MAX, 70, {80, false});
  CHECK(longest_line(out) <= 80);
  CHECK(out.find("aten::cudnn_convolution  ") != std::string::npos);  // the leaf, at the end of the cell
  CHECK(out.find("ProfilerStep#6") != std::string::npos);
  CHECK(out.find("...") == std::string::npos);
}

TEST_CASE("text table: a table of numbers wider than the terminal is printed as it is") {
  // Only names are cut: numbers are never elided, so a wide numbers-only table is not a failure.
  std::vector<std::string> cols;
  std::vector<Cell> row;
  for (int k = 0; k < 30; ++k) {
    cols.push_back("column_number_" + std::to_string(k) + "_us");
    row.push_back(Cell::ns(int64_t(123456789)));
  }
  Table t("numbers", cols);
  t.rows.push_back(row);
  std::string out;
  analysis::append_text_table(out, t, SIZE_MAX, 60, {80, false});
  CHECK(longest_line(out) > 80);
  CHECK(out.find("123 ms") != std::string::npos);
  CHECK(out.find("…") == std::string::npos);
  CHECK(out.find("cut with") == std::string::npos);
}
