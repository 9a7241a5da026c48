#include "views/live_view.h"

#include <imgui.h>

#include <chrono>
#include <cstring>

#include "core/capture/live_server.h"
#include "core/capture/trace_output.h"
#include "core/present/time_axis.h"
#include "core/snapshot/snapshot.h"
#include "views/analysis_model.h"

namespace sl::views {

bool LiveView::listen(const std::string& socket, std::string& error) {
  socket_ = socket;
  if (feed_.listen(socket, error)) return true;
  error_ = error;
  return false;
}

std::string LiveView::command_hint() const {
  std::string cmd = "sightline capture --live";
  if (socket_ != capture::default_live_socket()) cmd += " --socket " + socket_;
  return cmd + " -- your_program args...";
}

namespace {
template <class T>
bool ready(const std::future<T>& f) {
  return f.valid() && f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}
}  // namespace

bool LiveView::poll(Workspace& ws) {
  status_ = feed_.status();
  bool changed = false;
  if (ready(analysing_)) show_analyses(ws), changed = true;
  // A snapshot being written and the analyses read the store: batches wait for them.
  bool reading = (snapshotting_.valid() && !ready(snapshotting_)) || analysing_.valid();
  if (!reading) {
    std::vector<LiveBatch> batches = feed_.poll();
    if (!batches.empty()) apply(batches, ws), changed = true;
    if (live_.store() && (analyses_asked_ || (shown_.last_batch && !shown_.final))) start_analyses();
  }
  if (TimelineView* tl = ws.timeline()) tl->follow(ws.store()->end_ns);
  for (auto* job : {&saving_, &snapshotting_})
    if (ready(*job)) save_message_ = job->get(), changed = true;
  return changed;
}

// Appends the batches to the store (a fresh one starts a new store: a new capture starts
// afresh, following) and rebuilds the views over the grown store, keeping what the user made
// of them. The analyses shown stay those of the records they were run on.
void LiveView::apply(std::vector<LiveBatch>& batches, Workspace& ws) {
  double t0 = live_clock_s();
  // Only this view installs stores in its workspace; should anything else have, the batches go
  // to a new store rather than to one that is gone.
  if (live_.store() && ws.store() != live_.store()) live_ = LiveStore{};
  for (LiveBatch& b : batches) {
    if (std::unique_ptr<TraceStore> fresh = live_.apply(b)) {
      std::string label = "live: " + (b.info.process_name.empty() ? socket_ : b.info.process_name);
      ws.install_store(std::move(fresh), nullptr, {}, label, nullptr);
      ws.timeline()->set_following(true);
      shown_ = {};
      shown_.session = b.session;
    }
    shown_.generation = b.generation;
    shown_.last_batch = b.final;
    ++shown_.batches;
  }
  if (shown_.last_batch) live_.end();
  shown_.records = live_.records();
  shown_.kernels = live_.kernels();
  TimelineViewState keep = ws.timeline()->save_state();
  ws.reshow_store(keep);
  ws.timeline()->follow_available = true;
  double now = live_clock_s();
  shown_.append_s = now - t0;
  shown_.visible_s = now - batches.back().arrived_s;
}

void LiveView::start_analyses() {
  const TraceStore* store = live_.store();
  analysing_last_ = shown_.last_batch;
  analyses_asked_ = false;
  analyses_started_ = live_clock_s();
  shown_.analysed_records = shown_.records;
  analysing_ = std::async(std::launch::async, [store] { return build_analysis_model(*store); });
}

void LiveView::show_analyses(Workspace& ws) {
  std::unique_ptr<AnalysisModel> model = analysing_.get();
  std::vector<IdleGapMark> gaps;
  if (model->report.causes) gaps = idle_gap_marks(*model->report.causes);
  // No derived counter rows (queue length, copy bandwidth) in a live tab: they would join the
  // store after its name index was built, and batches would take them for new points. The
  // saved capture or snapshot, opened as a trace, has them.
  shown_.analyses_s = live_clock_s() - analyses_started_;
  shown_.analysed = true;
  shown_.final = analysing_last_;
  TimelineViewState keep = ws.timeline()->save_state();
  ws.reshow_store(keep, std::move(model), std::move(gaps));
  ws.timeline()->follow_available = true;
}

std::string LiveView::save(const std::string& path, bool wait) {
  if (saving_.valid()) return "a save is already running";
  // The JSON is built from a copy of the records on the save thread: the UI keeps drawing.
  saving_ = std::async(std::launch::async, [this, path] {
    std::string why;
    std::string json = feed_.kineto_json();
    if (!capture::write_trace_file(path, json, why)) return "could not save: " + why;
    return "saved " + path;
  });
  if (!wait) return "";
  save_message_ = saving_.get();
  return save_message_.rfind("saved ", 0) == 0 ? "" : save_message_;
}

std::string LiveView::save_snapshot(const std::string& path, bool wait) {
  if (!live_.store()) return "nothing captured yet";
  if (snapshotting_.valid()) return "a snapshot is already being written";
  const TraceStore* store = live_.store();  // not appended to until written (poll waits)
  snapshotting_ = std::async(std::launch::async, [store, path] {
    std::string why = write_snapshot(*store, path);
    return why.empty() ? "saved snapshot " + path : "could not save the snapshot: " + why;
  });
  if (!wait) return "";
  save_message_ = snapshotting_.get();
  return save_message_.rfind("saved ", 0) == 0 ? "" : save_message_;
}

void LiveView::draw_bar(Workspace& ws) {
  const capture::LiveStatus& s = status_;
  TimelineView* tl = ws.timeline();
  if (tl) {
    bool follow = tl->following();
    if (ImGui::Checkbox("Follow (End)", &follow)) tl->set_following(follow);
    ImGui::SameLine();
  }
  ImGui::BeginDisabled(!live_.store() || analyses_asked_ || analysing_.valid());
  if (ImGui::Button(shown_.analysed ? "Re-run analyses" : "Run analyses")) request_analyses();
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Analyses run on demand, on the data received so far, and once when the capture ends;\n"
                      "never per batch. Counts and GPU busy time in the status line are kept per batch.");
  ImGui::SameLine();
  ImGui::BeginDisabled(!can_save());
  if (ImGui::Button("Save capture as...")) open_save_popup();
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(!can_save_snapshot());
  if (ImGui::Button("Save snapshot...")) open_snapshot_popup();
  ImGui::EndDisabled();

  std::string line;
  auto add = [&](const std::string& part) { line += (line.empty() ? "" : "  ·  ") + part; };
  if (!s.has_capture) {
    add("listening on " + socket_ + ": waiting for a capture");
  } else {
    std::string who = s.info.process_name + " (pid " + std::to_string(s.info.pid) + ")";
    add((s.connected ? "streaming " : s.ended ? "ended " : "cut ") + who);
    add(std::to_string(s.records) + " records");
    add(std::to_string(s.batches) + " batches");
    add(std::to_string(s.kernels) + " kernels");
    add("dropped " + std::to_string(s.drops.dropped_buffer) + " ours + " + std::to_string(s.drops.dropped_cupti) + " CUPTI");
    if (s.seconds >= 0.5) {  // a rate over a blink means nothing
      char rate[48];
      std::snprintf(rate, sizeof rate, "%.0f records/s", double(s.records) / s.seconds);
      add(rate);
    }
    if (live_.store() && live_.store()->end_ns > 0) {
      char busy[64];
      std::snprintf(busy, sizeof busy, "GPU busy %.1f%%", 100.0 * double(live_.gpu_busy_ns()) / double(live_.store()->end_ns));
      add(busy);
    }
    char idle[96];
    std::snprintf(idle, sizeof idle, "%llu idle gaps (%.3f ms) between GPU work", (unsigned long long)live_.idle_gaps(),
                  double(live_.gpu_idle_ns()) / 1e6);
    add(idle);
    char shown[64];
    std::snprintf(shown, sizeof shown, "shown %.0f ms after arrival", shown_.visible_s * 1e3);
    add(shown);
    add(shown_.analysed ? "analyses of " + std::to_string(shown_.analysed_records) + " records"
                        : "analyses on demand (or when it ends)");
  }
  ImGui::TextWrapped("%s", line.c_str());  // a long status wraps rather than runs off
  if (!s.cut.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(213, 94, 0, 255));
    ImGui::TextWrapped("cut: %s (the %llu records received are kept)", s.cut.c_str(), (unsigned long long)s.records);
    ImGui::PopStyleColor();
  } else if (s.ended) {
    ImGui::TextDisabled("ended: the program closed its capture cleanly");
  }
  if (!s.note.empty()) ImGui::TextDisabled("%s", s.note.c_str());
  if (!save_message_.empty()) ImGui::TextDisabled("%s", save_message_.c_str());
}

void LiveView::draw_empty() const {
  ImGui::Spacing();
  if (!error_.empty()) {
    ImGui::TextWrapped("Live capture is off: %s", error_.c_str());
    return;
  }
  ImGui::Text("Live capture: listening on %s", socket_.c_str());
  ImGui::TextWrapped("Run your CUDA program under Sightline from a terminal; its GPU activity streams here while it runs:");
  std::string cmd = command_hint();
  ImGui::Indent();
  ImGui::TextUnformatted(cmd.c_str());
  ImGui::SameLine();
  if (ImGui::SmallButton("Copy")) ImGui::SetClipboardText(cmd.c_str());
  ImGui::Unindent();
  ImGui::TextDisabled("The timeline follows the newest data (End); analyses run on demand or when the program exits.");
  ImGui::TextDisabled("File > Live capture... stops listening.");
  if (!status_.note.empty()) ImGui::TextDisabled("%s", status_.note.c_str());
}

namespace {
// A modal asking for a path (filled with `suggested` the first time); `save` on Save or Enter
// returns "" or the error, kept in `message`.
void path_popup(bool& open, const char* title, const char* prompt, char (&path)[512], const std::string& suggested,
                const std::function<std::string(const std::string&)>& save, std::string& message) {
  if (open) {
    ImGui::OpenPopup(title);
    open = false;
    if (!*path) std::snprintf(path, sizeof path, "%s", suggested.c_str());
  }
  if (!ImGui::BeginPopupModal(title, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  ImGui::TextUnformatted(prompt);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 30);
  bool enter = ImGui::InputText("##path", path, sizeof path, ImGuiInputTextFlags_EnterReturnsTrue);
  if (ImGui::Button("Save") || enter) {
    if (std::string e = save(path); !e.empty()) message = e;
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}
}  // namespace

void LiveView::draw_save_popup() {
  std::string pid = std::to_string(status_.info.pid);
  path_popup(save_popup_, "Save capture", "Kineto JSON (gzip when the name ends in .gz):", save_path_,
             "capture-" + pid + ".json.gz", [this](const std::string& p) { return save(p, false); }, save_message_);
  path_popup(snapshot_popup_, "Save snapshot", "Snapshot of what is shown now (opens like any trace):", snapshot_path_,
             "capture-" + pid + ".slsnap", [this](const std::string& p) { return save_snapshot(p, false); }, save_message_);
}

void LiveView::write_state(JsonWriter& w, Workspace& ws) const {
  const capture::LiveStatus& s = status_;
  w.begin_object().field("socket", socket_).field("listening", s.listening).field("connected", s.connected);
  w.field("has_capture", s.has_capture).field("program", s.info.process_name).field("pid", uint64_t(s.info.pid));
  w.field("records", s.records).field("kernels", s.kernels).field("batches", s.batches);
  w.field("dropped_ours", s.drops.dropped_buffer).field("dropped_cupti", s.drops.dropped_cupti);
  w.field("ended", s.ended).field("cut", s.cut).field("refused", s.refused).field("note", s.note);
  w.field("store_kernels", shown_.kernels).field("store_records", shown_.records).field("batches_shown", shown_.batches);
  w.field("final_shown", shown_.final).field("analyses_shown", shown_.analysed).field("analyses_asked", analyses_asked_);
  w.field("idle_gaps", live_.idle_gaps()).field("gpu_idle_ns", int64_t(live_.gpu_idle_ns()));
  w.field("visible_ms", shown_.visible_s * 1e3).field("append_ms", shown_.append_s * 1e3);
  w.field("analyses_ms", shown_.analyses_s * 1e3).field("command", command_hint());
  TimelineView* tl = ws.timeline();
  w.field("following", tl && tl->following());
  w.key("store_end_ns");
  ws.store() ? w.value(int64_t(ws.store()->end_ns)) : w.null();
  w.field("save_message", save_message_);
  w.end_object();
}

}  // namespace sl::views
