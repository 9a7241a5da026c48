// Streaming decompression of `.json.gz` (core/import/common/gzip_stream.h, issue 15): a trace decompressed
// while it is parsed must load exactly as its plain text does, wherever members, parse chunks
// and the decompressor's steps fall (inside strings, numbers, escapes); corrupt and cut-off
// streams give the same errors and truncation reports as the whole-file gunzip.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/import/common/file_reader.h"
#include "core/import/common/gzip_stream.h"
#include "core/import/kineto/kineto_loader.h"
#include "core/import/trace_loader.h"
#include "tests/unit/test_support.h"

using namespace sl;
using sl::test::gzip;

namespace {

// Events whose text makes chunk and member boundaries land everywhere: escapes, long numbers,
// `},{` inside strings, nested args objects. About `events` × 200 bytes.
std::string tricky_trace(int events) {
  std::string json = R"({"displayTimeUnit":"ns","traceEvents":[)";
  for (int i = 0; i < events; ++i) {
    if (i) json += i % 3 ? "," : ",\n";
    json += R"({"ph":"X","cat":"kernel","name":"k\"},{\\)" + std::to_string(i % 37) + R"(\u00e9","pid":1,"tid":)" +
            std::to_string(i % 5) + R"(,"ts":)" + std::to_string(1000000 + i * 10) + R"(.125,"dur":7.5,)" +
            R"("args":{"correlation":)" + std::to_string(i) + R"(,"nested":{"a":[1,{"b":"},{"}],"x":123456789.0625},)" +
            R"("s":"tab\t\"q\" )" + std::string(size_t(i % 23), 'z') + R"("}})";
  }
  json += R"(],"deviceProperties":[{"id":0,"name":"gpu"}]})";
  return json;
}

// `text` as gzip members of `member` bytes each (the last one shorter).
std::string gzip_members(std::string_view text, size_t member) {
  std::string out;
  for (size_t at = 0; at < text.size(); at += member) out += gzip(text.substr(at, member));
  return out;
}

// `text` as members of `member` bytes written as make_synthetic_trace writes them: each header
// carries the member's compressed size, so the stream decodes two halves on two threads.
std::string gzip_indexed_members(std::string_view text, size_t member) {
  libdeflate_compressor* c = libdeflate_alloc_compressor(1);
  std::string out, deflated;
  for (size_t at = 0; at < text.size(); at += member) {
    std::string_view part = text.substr(at, member);
    deflated.resize(libdeflate_deflate_compress_bound(c, part.size()));
    deflated.resize(libdeflate_deflate_compress(c, part.data(), part.size(), deflated.data(), deflated.size()));
    uint32_t trailer[2] = {libdeflate_crc32(0, part.data(), part.size()), uint32_t(part.size())};
    out += gzip_header_with_size(uint32_t(kGzipHeaderWithSize + deflated.size() + sizeof trailer));
    out += deflated;
    out.append(reinterpret_cast<const char*>(trailer), sizeof trailer);
  }
  libdeflate_free_compressor(c);
  return out;
}

std::string write_file(const std::string& name, std::string_view bytes) {
  std::string path = "/tmp/sightline_gzip_stream_test_" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path;
}

// What a load stored, for comparing two loads: counts, issues, every slice and every args row
// as decode_args gives it.
std::string summary(const TraceStore& s) {
  std::ostringstream out;
  const EventCounts& n = s.counts;
  out << n.events << ' ' << n.slices << ' ' << n.instants << ' ' << n.metadata << ' ' << n.skipped << " bytes "
      << s.meta.bytes << " unit " << s.meta.display_time_unit << " devices " << s.meta.devices.size() << '\n';
  for (size_t k = 0; k < size_t(IssueKind::kCount); ++k) out << s.issues.count(IssueKind(k)) << ' ';
  out << '\n';
  for (const Track& t : s.tracks)
    for (size_t i = 0; i < t.slices.size(); ++i)
      out << s.strings.view(t.tid_text) << ' ' << s.origin_ns + t.slices.start[i] << ' ' << t.slices.dur[i] << ' '
          << s.strings.view(t.slices.name[i]) << '\n';
  for (uint32_t row = 0; row < s.args_table().size(); ++row)
    for (const auto& [key, value] : s.decode_args(row)) out << row << ' ' << key << '=' << value << '\n';
  return out.str();
}

std::string plain_summary(const std::string& text) { return summary(*sl::test::load_ok(text)); }

}  // namespace

TEST_CASE("gzip stream: the decompressor's text, waited for piece by piece, is the file's") {
  std::string text = tricky_trace(50000);  // ~10 MB: more than the decompressor's lead
  REQUIRE(text.size() > 2 * GzipStream::kLead);
  for (size_t member : {size_t(1) << 30, size_t(65537), size_t(3 << 20) + 11}) {
    CAPTURE(member);
    auto compressed = std::make_shared<TraceStore::Buffer>();
    std::string z = gzip_members(text, member);
    REQUIRE(compressed->reserve(z.size()));
    std::memcpy(compressed->data, z.data(), z.size());
    compressed->size = z.size();
    auto stream = GzipStream::start(compressed);
    REQUIRE(stream);
    const char* data = stream->text()->data;
    size_t readable = 0, checked = 0;
    for (size_t pos = 0; (readable = stream->wait_for(pos)) > pos; pos += 100003) {
      CHECK(std::memcmp(data + checked, text.data() + checked, readable - checked) == 0);
      checked = readable;
      stream->consumed(pos / 2);
    }
    CHECK(stream->ended());
    CHECK(readable == text.size());
    CHECK(stream->error().empty());
    CHECK_FALSE(stream->cut_off());
    CHECK(stream->expected_size() == text.size());
    CHECK(data[text.size()] == 0);  // the padding after the text is zeros
  }
}

// Resident pages of the stream's reserved text range (mincore: the range is the stream's own
// fresh mapping, so a resident page is one the decompressor wrote).
static size_t resident_text_bytes(const GzipStream& stream, size_t up_to) {
  size_t page = size_t(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> pages((up_to + page - 1) / page);
  REQUIRE(::mincore(stream.text()->data, pages.size() * page, pages.data()) == 0);
  size_t resident = 0;
  for (unsigned char p : pages) resident += (p & 1) * page;
  return resident;
}

TEST_CASE("gzip stream: a large single member streams within the lead, never decoded whole ahead of the parser") {
  std::string text = tricky_trace(50000);  // ~10 MB in one member, as torch writes it
  REQUIRE(text.size() > GzipStream::kMemberTry + 2 * GzipStream::kLead);
  auto compressed = std::make_shared<TraceStore::Buffer>();
  std::string z = gzip(text);
  REQUIRE(compressed->reserve(z.size()));
  std::memcpy(compressed->data, z.data(), z.size());
  compressed->size = z.size();
  auto stream = GzipStream::start(compressed);
  REQUIRE(stream);
  REQUIRE(stream->wait_for(0) > 0);
  // A small file (well under kSmallCompressed of gzip) gets a shorter lead than a large one.
  REQUIRE(z.size() < GzipStream::kSmallCompressed);
  CHECK(stream->lead() <= GzipStream::kLead / 2);
  // Nothing consumed: the decompressor stops a lead ahead (plus one inflate step, shrunk alike).
  // A whole-member try of libdeflate would have written kMemberTry bytes before failing on a
  // member this large.
  usleep(50000);
  size_t resident = resident_text_bytes(*stream, text.size());
  CHECK(resident <= stream->lead() + GzipStream::kInflateStep * stream->lead() / GzipStream::kLead + 4096);
  CHECK(resident < GzipStream::kMemberTry);
  // It still gives the whole text, piece by piece, as the parser consumes it.
  size_t readable = 0;
  for (size_t pos = 0; (readable = stream->wait_for(pos)) > pos; pos = readable) stream->consumed(pos);
  CHECK(readable == text.size());
  CHECK(stream->error().empty());
}

TEST_CASE("gzip stream: a streamed .json.gz loads exactly as its text, wherever members split it") {
  std::string text = tricky_trace(30000);
  std::string expected = plain_summary(text);
  CHECK(expected.find("30000 30000") == 0);  // the reference itself: every event, every slice
  // One member (torch), members of odd sizes (bgzip-like), one member per few bytes.
  for (size_t member : {size_t(1) << 30, size_t(4 << 20), size_t(1000003), size_t(65521), size_t(4099)}) {
    CAPTURE(member);
    std::string path = write_file("members.json.gz", gzip_members(text, member));
    LoadResult r = load_trace(path);
    INFO(r.error.to_string());
    REQUIRE(r.ok());
    CHECK(r.warning.empty());
    CHECK(summary(*r.store) == expected);
    std::remove(path.c_str());
  }
  std::string small = tricky_trace(40);
  std::string path = write_file("tiny_members.json.gz", gzip_members(small, 7));
  LoadResult r = load_trace(path);
  REQUIRE(r.ok());
  CHECK(summary(*r.store) == plain_summary(small));
  std::remove(path.c_str());
}

TEST_CASE("gzip stream: a wrong CRC or a damaged member is the same error as before, with its byte") {
  std::string text = tricky_trace(20000);
  std::string first = gzip(text.substr(0, text.size() / 2)), second = gzip(text.substr(text.size() / 2));
  for (bool in_second : {false, true}) {
    CAPTURE(in_second);
    std::string z = first + second;
    size_t crc = (in_second ? z.size() : first.size()) - 8;  // the trailer: CRC32, then ISIZE
    z[crc] = char(z[crc] ^ 0x5A);
    TraceStore::Buffer whole;
    std::string expected_error;
    REQUIRE_FALSE(gunzip(z, whole, expected_error, nullptr));
    CHECK(expected_error == "corrupt or truncated gzip data in the member starting at compressed byte " +
                                std::to_string(in_second ? first.size() : 0));
    std::string path = write_file("crc.json.gz", z);
    LoadResult r = load_trace(path);
    CHECK_FALSE(r.ok());
    CHECK(r.error.message == expected_error);
    CHECK(r.error.byte_offset == 0);
    std::remove(path.c_str());
  }
  // Bytes after the members that are not gzip (zeros are padding and allowed).
  std::string path = write_file("junk.json.gz", first + second + "junk");
  LoadResult r = load_trace(path);
  CHECK_FALSE(r.ok());
  CHECK(r.error.message == "data after gzip member at compressed byte " + std::to_string(first.size() + second.size()) +
                               " is not gzip");
  path = write_file("zeros.json.gz", first + second + std::string(100, '\0'));
  r = load_trace(path);
  REQUIRE(r.ok());
  CHECK(summary(*r.store) == plain_summary(text));
  std::remove(path.c_str());
}

TEST_CASE("gzip stream: a multi-member gzip cut at many offsets loads what decompressed") {
  std::string text = tricky_trace(30000);
  std::string z = gzip_members(text, 1 << 20);
  std::string path = "/tmp/sightline_gzip_stream_test_cut.json.gz";
  int loaded = 0;
  for (size_t i = 1; i <= 24; ++i) {
    size_t cut = i * z.size() / 25 + i * 131;
    CAPTURE(cut);
    write_file("cut.json.gz", z.substr(0, cut));
    // The whole-file gunzip of the same bytes says how much text there is.
    TraceStore::Buffer whole;
    std::string error;
    uint64_t cut_at = 0;
    REQUIRE(gunzip(std::string_view(z).substr(0, cut), whole, error, &cut_at));
    LoadResult r = load_trace(path);
    if (!r.ok()) {  // nothing complete before the cut
      CHECK(r.error.message.find("gzip stream itself stops at compressed byte " + std::to_string(cut)) != std::string::npos);
      continue;
    }
    ++loaded;
    REQUIRE(r.store->issues.truncation.has_value());
    CHECK(r.store->issues.truncation->gzip);
    CHECK(r.store->issues.truncation->compressed_offset == cut);
    CHECK(r.store->meta.bytes == whole.size);
    // The same events as the plain text's prefix, read by the tolerant loader.
    LoadResult plain = load_trace_text(std::string_view(text).substr(0, whole.size));
    REQUIRE(plain.ok());
    CHECK(r.store->counts.events == plain.store->counts.events);
    CHECK(r.store->counts.events > 0);
  }
  CHECK(loaded >= 23);
  std::remove(path.c_str());
}

TEST_CASE("gzip stream: members with their sizes decode in two parts, parsed by two threads, as the text") {
  std::string text = tricky_trace(260000);
  REQUIRE(text.size() > GzipStream::kSplitBytes);
  std::string z = gzip_indexed_members(text, 4 << 20);
  // The stream alone: two parts, the second starting at a member's text offset near the middle.
  auto compressed = std::make_shared<TraceStore::Buffer>();
  REQUIRE(compressed->reserve(z.size()));
  std::memcpy(compressed->data, z.data(), z.size());
  compressed->size = z.size();
  auto stream = GzipStream::start(compressed);
  REQUIRE(stream);
  CHECK(stream->second_part() % (4 << 20) == 0);
  CHECK(stream->second_part() > text.size() / 3);
  CHECK(stream->expected_size() == text.size());
  size_t half = stream->second_part();
  CHECK(stream->wait_for(half + 10) > half + 10);  // the second part runs without the first
  CHECK(std::memcmp(stream->text()->data + half, text.data() + half, 10) == 0);
  stream.reset();
  // Loaded: the same store as the plain text (which is parsed in two halves too).
  std::string path = write_file("indexed.json.gz", z);
  LoadResult r = load_trace(path);
  INFO(r.error.to_string());
  REQUIRE(r.ok());
  CHECK(summary(*r.store) == plain_summary(text));
  // A wrong CRC in a member of the second part: the whole-file gunzip's error, at that member.
  size_t member_in_second = 0;
  for (size_t at = 0, i = 0; at < z.size(); ++i) {
    uint32_t size = 0;
    std::memcpy(&size, z.data() + at + 16, 4);
    if (i == 10) member_in_second = at;
    if (i == 10) z[at + size - 8] ^= 1;
    at += size;
  }
  REQUIRE(member_in_second > z.size() / 2);
  write_file("indexed.json.gz", z);
  r = load_trace(path);
  CHECK_FALSE(r.ok());
  CHECK(r.error.message == "corrupt or truncated gzip data in the member starting at compressed byte " +
                               std::to_string(member_in_second));
  std::remove(path.c_str());
}

TEST_CASE("gzip stream: progress reports an estimated total never behind what is done, exact at the end") {
  std::string text = tricky_trace(30000);
  std::string path = write_file("progress.json.gz", gzip(text));
  LoadOptions options;
  uint64_t reports = 0, last_total = 0;
  bool never_behind = true;
  options.on_progress = [&](const LoadProgress& p) {
    ++reports;
    never_behind &= p.bytes_done <= p.bytes_total;
    last_total = p.bytes_total;
  };
  LoadResult r = load_trace(path, options);
  REQUIRE(r.ok());
  CHECK(reports > 2);
  CHECK(never_behind);
  CHECK(last_total == text.size());
  std::remove(path.c_str());
}
