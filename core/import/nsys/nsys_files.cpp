// Nsight Systems report files around the SQLite reader: recognising them, `.sqlite.gz` through a
// temporary file, `.nsys-rep` through `nsys export`, the truncation check, the bare-scan
// yardstick, and the `info` lines.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/import/common/file_reader.h"
#include "core/import/nsys/nsys_loader.h"
#include "core/import/nsys/nsys_sqlite.h"
#include "core/snapshot/snapshot_cache.h"
#include "core/store/string_pool.h"
#include "core/text/json_writer.h"

extern char** environ;

namespace sl {
namespace nsys {

std::string quote_identifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

// Opens read-only, with defensive settings: the file is untrusted input.
Db open_database(const std::string& path, std::string& error) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  Db db(raw);
  if (rc != SQLITE_OK) {
    error = std::string("cannot open as SQLite: ") + (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc));
    return nullptr;
  }
  harden(raw);
  sqlite3_exec(raw, "PRAGMA mmap_size=1073741824;", nullptr, nullptr, nullptr);
  return db;
}

void harden(sqlite3* db) {
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_exec(db, "PRAGMA query_only=1; PRAGMA cell_size_check=1;", nullptr, nullptr, nullptr);
}

// A process killed while it loads a `.sqlite.gz` (Ctrl-C, OOM) leaves its temporary file: the
// next one removes those older than a day (no load takes that long).
static void remove_stale_temp_files(const std::string& dir) {
  std::error_code ec;
  auto day_ago = std::filesystem::file_time_type::clock::now() - std::chrono::hours(24);
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.starts_with("sightline-nsys-") && name.ends_with(".sqlite") && name.size() == 28 &&
        e.last_write_time(ec) < day_ago && !ec)
      std::filesystem::remove(e.path(), ec);
  }
}

// The new file's descriptor, or -1 with `error` set.
static int create_temp_file(std::string& path, std::string& error) {
  const char* dir = std::getenv("TMPDIR");
  std::string folder = dir && *dir ? dir : "/tmp";
  remove_stale_temp_files(folder);
  std::string pattern = folder + "/sightline-nsys-XXXXXX.sqlite";
  int fd = ::mkstemps(pattern.data(), 7);
  if (fd < 0) return error = "cannot create a temporary file in " + pattern + ": " + std::strerror(errno), -1;
  path = pattern;
  return fd;
}

bool TempFile::create(std::string& error) {
  int fd = create_temp_file(path_, error);
  return fd >= 0 && ::close(fd) == 0;
}

bool TempFile::write(std::string_view bytes, std::string& error) {
  int fd = create_temp_file(path_, error);
  if (fd < 0) return false;
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = "cannot write the temporary file " + path_ + ": " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    done += size_t(n);
  }
  return ::close(fd) == 0 || (error = "cannot write the temporary file " + path_, false);
}

}  // namespace nsys

namespace {

using nsys::Db;
using nsys::Statement;
using nsys::TempFile;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

LoadResult error_result(const std::string& file, std::string message) {
  LoadResult r;
  r.error.file = file;
  r.error.message = std::move(message);
  return r;
}

uint64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

uint32_t big_endian(const unsigned char* p, int n) {
  uint32_t v = 0;
  for (int i = 0; i < n; ++i) v = v << 8 | p[i];
  return v;
}

// SQLite reads pages past the end of a truncated file as zeros and may not notice until it
// needs them, or ever (a cut in a table nobody reads). The header says how long the file must
// be, when its page count is valid (change counter == version-valid-for): check it first.
std::string truncation(std::string_view head, uint64_t size) {
  if (head.size() < 100) return size < 100 ? "the file is truncated: " + std::to_string(size) +
                                                 " bytes, less than an SQLite header" : "";
  auto* h = reinterpret_cast<const unsigned char*>(head.data());
  uint64_t page = big_endian(h + 16, 2);
  if (page == 1) page = 65536;
  uint64_t pages = big_endian(h + 28, 4);
  bool valid = page >= 512 && (page & (page - 1)) == 0 && pages && big_endian(h + 24, 4) == big_endian(h + 92, 4);
  if (!valid || pages * page <= size) return {};
  return "the file is truncated: its header promises " + std::to_string(pages) + " pages of " + std::to_string(page) +
         " bytes (" + std::to_string(pages * page) + " bytes), the file has " + std::to_string(size);
}

std::string file_truncation(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char head[100];
  ssize_t n = ::read(fd, head, sizeof head);
  ::close(fd);
  return truncation(std::string_view(head, n > 0 ? size_t(n) : 0), file_size(path));
}

LoadResult load_database_file(const std::string& db_path, const std::string& shown, uint64_t bytes,
                              const LoadOptions& options) {
  if (std::string cut = file_truncation(db_path); !cut.empty()) return error_result(shown, cut);
  std::string error;
  Db db = nsys::open_database(db_path, error);
  if (!db) return error_result(shown, error);
  return nsys::load_database(db.get(), shown, bytes, options);
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::string_view rest(path);
  while (!rest.empty()) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return false;
}

// A path as one shell word: inside single quotes, where only a quote itself needs care ('\'').
std::string shell_quoted(const std::string& path) {
  std::string quoted = "'";
  for (char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string export_command(const std::string& rep, const std::string& out) {
  return "nsys export --type sqlite --output " + shell_quoted(out) + " " + shell_quoted(rep);
}

std::string read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs `nsys export` into `partial`, then renames it to `out`. False (and no partial file left)
// when nsys fails.
bool run_nsys_export(const std::string& rep, const std::string& partial, const std::string& out) {
  std::vector<std::string> argv_s = {"nsys", "export", "--type", "sqlite", "--force-overwrite", "true",
                                     "--output", partial, rep};
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t child = 0;
  int status = 0;
  // nsys prints its progress on stdout: send it to stderr, where the user still sees it, so
  // that it never mixes with a command's output (`info --format json`, `report --format csv`).
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  int spawned = posix_spawnp(&child, "nsys", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0 || ::waitpid(child, &status, 0) < 0 ||
      !WIFEXITED(status) || WEXITSTATUS(status) != 0 || ::rename(partial.c_str(), out.c_str()) != 0) {
    ::unlink(partial.c_str());
    return false;
  }
  return true;
}

void report_exporting(const LoadOptions& options) {
  if (!options.on_progress) return;
  LoadProgress p;
  p.phase = "exporting";
  options.on_progress(p);
}

// The cache off (`--no-cache`, SIGHTLINE_NO_CACHE, no cache folder): exported into a temporary
// file, removed after loading, so nothing is left behind and the next open exports again. The
// store does not need the export once loaded (args are copied into it), and a snapshot is not
// written either with the cache off, so nothing needs to keep it.
LoadResult load_nsys_rep_uncached(const std::string& path, const std::string& stem, const LoadOptions& options) {
  TempFile temp;
  std::string error;
  if (!temp.create(error)) return error_result(path, error);
  report_exporting(options);
  // The command to run by hand writes beside the report, as when nsys is missing: the
  // temporary file is gone by then.
  if (!run_nsys_export(path, temp.path(), temp.path()))
    return error_result(path, "`" + export_command(path, stem + ".sqlite") + "` failed; run it by hand to see why");
  return load_database_file(temp.path(), path, file_size(temp.path()), options);
}

// The cache on: exported into the cache folder's `nsys/`, one export per report path
// (`NAME-<hash of the path>.sqlite`) with its report's size and mtime in a `.key` beside it:
// reused while they match, replaced when the report changes, so old exports never pile up. An
// export is an entry of the snapshot cache (core/snapshot/snapshot_cache.h): it counts toward
// SIGHTLINE_CACHE_MAX and is evicted with the snapshots by last use. It is kept even though the
// report's snapshot is cached too: `bench load` and a snapshot discarded (a new format version)
// read it again instead of running nsys, which takes minutes on a large report. An export larger
// than the whole limit is loaded and removed, not kept (as a snapshot that size is not cached).
LoadResult load_nsys_rep_cached(const std::string& path, const struct stat& st, const std::string& stem,
                                const LoadOptions& options, const CacheSettings& cache) {
  std::filesystem::path dir = std::filesystem::path(cache.dir) / kNsysExportFolder;  // made by the caller
  std::error_code ec;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)hash_bytes(std::filesystem::absolute(path, ec).string()));
  std::string name = std::filesystem::path(stem).filename().string() + "-" + hex;
  std::string entry = std::string(kNsysExportFolder) + "/" + name;
  std::string base = (dir / name).string();
  std::string out = base + ".sqlite", key_file = base + ".key";
  std::string key = std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
                    std::to_string(st.st_mtim.tv_nsec) + "\n";
  bool keep = true;
  if (file_size(out) == 0 || read_small_file(key_file) != key) {
    report_exporting(options);
    ::unlink(key_file.c_str());  // never a key beside an export it does not describe
    // Ends in .sqlite: nsys adds the extension to an output name without it.
    std::string partial = base + ".partial.sqlite";
    if (!run_nsys_export(path, partial, out))
      return error_result(path, "`" + export_command(path, partial) + "` failed; run it by hand to see why");
    std::ofstream(key_file, std::ios::binary) << key;  // if this fails, the next open exports again
    keep = file_size(out) + key.size() <= cache.max_bytes;
    if (keep) evict_cache_entries(cache, entry);
  } else {
    ::utimensat(AT_FDCWD, out.c_str(), nullptr, 0);  // used now: evicted after the others
  }
  LoadResult r = load_database_file(out, path, file_size(out), options);
  if (!keep) {
    ::unlink(key_file.c_str());
    ::unlink(out.c_str());
  } else if (r.ok()) {
    std::string where;
    append_json_string(where, out);
    r.store->meta.top_level.emplace_back("nsys_exported_to", where);
  }
  return r;
}

// `.nsys-rep`: `nsys export --type sqlite`, then read as any export; where the export goes
// depends on the process's cache settings (`--no-cache` included).
LoadResult load_nsys_rep(const std::string& path, const LoadOptions& options) {
  std::string stem = path.substr(0, path.size() - std::string_view(".nsys-rep").size());
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return error_result(path, std::string("cannot open: ") + std::strerror(errno));
  if (!on_path("nsys"))
    return error_result(path, "an Nsight Systems report needs `nsys` to be read, and nsys is not on PATH. Export it "
                              "to SQLite with\n  " + export_command(path, stem + ".sqlite") +
                              "\nand open " + stem + ".sqlite");
  const CacheSettings& cache = process_cache_settings();
  std::error_code ec;
  // A cache folder that cannot be made (read-only home, a file in the way) costs the cache, not
  // the report, as for snapshots: the export goes to a temporary file.
  if (cache.enabled) std::filesystem::create_directories(std::filesystem::path(cache.dir) / kNsysExportFolder, ec);
  if (!cache.enabled || ec) return load_nsys_rep_uncached(path, stem, options);
  return load_nsys_rep_cached(path, st, stem, options, cache);
}

}  // namespace

void nsys_info_json(const TraceMeta& meta, JsonWriter& w) {
  bool any = false;
  for (const auto& [key, value] : meta.top_level) {
    if (!key.starts_with("nsys_")) continue;
    if (!any) w.key("nsys").begin_object();
    any = true;
    w.key(std::string_view(key).substr(5)).raw(value);
  }
  if (any) w.end_object();
}

std::string nsys_info_text(const TraceMeta& meta) {
  std::string out;
  auto line = [&](const char* label, const std::string& text) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%-16s", label);
    out.append(buf).append(text.empty() ? "none" : text).append("\n");
  };
  simdjson::dom::parser parser;
  for (const auto& [key, value] : meta.top_level) {
    simdjson::dom::element root;
    if (!key.starts_with("nsys_") || parser.parse(value).get(root)) continue;
    std::string text;
    auto add = [&](std::string_view part) { text.append(text.empty() ? "" : ", ").append(part); };
    if (key == "nsys_export") {
      std::string_view schema, product;
      if (root["schema_version"].get(schema)) schema = "unknown";
      if (root["product_version"].get(product)) product = "unknown";
      line("nsys export", "schema " + std::string(schema) + ", Nsight Systems " + std::string(product));
    } else if (key == "nsys_missing" || key == "nsys_unreadable_tables") {
      for (auto item : root.get_array()) {
        std::string_view v;
        if (!item.get(v)) add(v);
      }
      if (key == "nsys_missing" || !text.empty()) line(key == "nsys_missing" ? "not recorded" : "unreadable", text);
    } else if (key == "nsys_unmapped_tables") {
      simdjson::dom::object tables;
      if (root.get(tables)) continue;
      for (auto [table, rows] : tables) {
        int64_t n = 0;
        if (rows.get(n)) n = 0;
        add(std::string(table) + " (" + std::to_string(n) + " rows)");
      }
      line("not mapped", text);
    } else if (key == "nsys_exported_to") {
      std::string_view v;
      if (!root.get(v)) line("exported to", std::string(v));
    }
  }
  return out;
}

NsysFileKind nsys_file_kind(const std::string& path) {
  if (ends_with(path, ".nsys-rep")) return NsysFileKind::NsysRep;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NsysFileKind::NotNsys;
  char head[16] = {};
  ssize_t n = ::read(fd, head, sizeof head);
  ::close(fd);
  if (n == 16 && std::memcmp(head, "SQLite format 3\0", 16) == 0) return NsysFileKind::Sqlite;
  if (n >= 2 && uint8_t(head[0]) == 0x1f && uint8_t(head[1]) == 0x8b && ends_with(path, ".sqlite.gz"))
    return NsysFileKind::SqliteGz;
  return NsysFileKind::NotNsys;
}

LoadResult load_nsys(const std::string& path, NsysFileKind kind, const LoadOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  LoadResult result;
  if (kind == NsysFileKind::NsysRep) {
    result = load_nsys_rep(path, options);
  } else if (kind == NsysFileKind::SqliteGz) {
    FileBytes bytes = read_trace_file(path, options);
    if (!bytes.buffer) return error_result(path, bytes.error);
    TempFile temp;
    std::string error;
    if (!temp.write(bytes.buffer->view(), error)) return error_result(path, error);
    uint64_t size = bytes.buffer->size;
    bytes.buffer.reset();  // the temporary file holds it now
    result = load_database_file(temp.path(), path, size, options);
  } else {
    result = load_database_file(path, path, file_size(path), options);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

LoadResult load_nsys_bytes(std::string_view bytes, const std::string& name) {
  if (std::string cut = truncation(bytes.substr(0, 100), bytes.size()); !cut.empty()) return error_result(name, cut);
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    sqlite3_close(raw);
    return error_result(name, "cannot open an in-memory SQLite database");
  }
  Db db(raw);
  // Read-only and not freed by SQLite: `bytes` stays the caller's.
  int rc = sqlite3_deserialize(raw, "main", reinterpret_cast<unsigned char*>(const_cast<char*>(bytes.data())),
                               sqlite3_int64(bytes.size()), sqlite3_int64(bytes.size()), SQLITE_DESERIALIZE_READONLY);
  if (rc != SQLITE_OK) return error_result(name, std::string("cannot read as SQLite: ") + sqlite3_errstr(rc));
  nsys::harden(raw);
  return nsys::load_database(raw, name, bytes.size(), {});
}

NsysScan nsys_bare_scan(const std::string& path) {
  NsysScan scan;
  NsysFileKind kind = nsys_file_kind(path);
  TempFile temp;
  std::string db_path = path;
  if (kind == NsysFileKind::SqliteGz) {
    FileBytes bytes = read_trace_file(path, {});
    if (!bytes.buffer) return scan.error = bytes.error, scan;
    if (!temp.write(bytes.buffer->view(), scan.error)) return scan;
    db_path = temp.path();
  } else if (kind != NsysFileKind::Sqlite) {
    return scan.error = "not an Nsight Systems SQLite export", scan;
  }
  Db db = nsys::open_database(db_path, scan.error);
  if (!db) return scan;
  auto columns_of = [&](const char* table, auto const& wanted) {
    std::vector<std::string> have;
    Statement info(db.get(), "SELECT name FROM pragma_table_info(?1)");
    info.bind(1, table);
    while (info.step() == SQLITE_ROW) have.emplace_back(info.text(0));
    std::string sql;
    for (const char* c : wanted)
      if (std::find(have.begin(), have.end(), c) != have.end()) sql += (sql.empty() ? "" : ", ") + nsys::quote_identifier(c);
    return sql.empty() ? sql : "SELECT " + sql + " FROM " + table;
  };
  auto t0 = std::chrono::steady_clock::now();
  int64_t sink = 0;
  for (auto [table, sql] : {std::pair<const char*, std::string>{"kernel", columns_of("CUPTI_ACTIVITY_KIND_KERNEL", nsys::kKernelColumns)},
                            {"runtime", columns_of("CUPTI_ACTIVITY_KIND_RUNTIME", nsys::kRuntimeColumns)}}) {
    if (sql.empty()) continue;
    Statement s(db.get(), sql);
    if (!s.prepared()) return scan.error = std::string("cannot read the ") + table + " table", scan;
    int columns = s.columns();
    while (s.step() == SQLITE_ROW) {
      ++scan.rows;
      for (int c = 0; c < columns; ++c) sink += s.i64(c);
    }
  }
  scan.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (sink == 42) scan.rows += 0;  // keeps the reads
  return scan;
}

}  // namespace sl
