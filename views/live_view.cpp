#include "views/live_view.h"

#include <imgui.h>

#include <chrono>
#include <cstring>

#include "core/capture/live_server.h"
#include "core/capture/trace_output.h"
#include "core/present/time_axis.h"

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

bool LiveView::poll(Workspace& ws) {
  status_ = feed_.status();
  bool changed = false;
  if (auto snap = feed_.poll()) {
    // Same capture: keep what the user made of the view. A new capture starts afresh, following.
    bool same = ws.timeline() && snap->session == shown_.session;
    TimelineViewState keep;
    if (same) keep = ws.timeline()->save_state();
    shown_ = {snap->session, snap->generation, snap->records, snap->kernels, shown_.snapshots + 1,
              snap->build_s, snap->final, snap->model != nullptr};
    std::string label = "live: " + (status_.info.process_name.empty() ? socket_ : status_.info.process_name);
    ws.install_store(std::move(snap->store), std::move(snap->model), std::move(snap->gaps), label,
                     same ? &keep : nullptr);
    if (!same) ws.timeline()->set_following(true);
    ws.timeline()->follow_available = true;
    changed = true;
  }
  if (TimelineView* tl = ws.timeline()) tl->follow(ws.store()->end_ns);
  if (saving_.valid() && saving_.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
    save_message_ = saving_.get(), changed = true;
  return changed;
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

void LiveView::draw_bar(Workspace& ws) {
  const capture::LiveStatus& s = status_;
  TimelineView* tl = ws.timeline();
  if (tl) {
    bool follow = tl->following();
    if (ImGui::Checkbox("Follow (End)", &follow)) tl->set_following(follow);
    ImGui::SameLine();
  }
  bool analyses = feed_.analyses_on();
  if (ImGui::Checkbox("Run analyses", &analyses)) feed_.set_analyses(analyses);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Analyses run on demand, not per batch: on, every snapshot is analysed (throttled);\n"
                      "off, they run once when the capture ends.");
  ImGui::SameLine();
  ImGui::BeginDisabled(!can_save());
  if (ImGui::Button("Save capture as...")) open_save_popup();
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
    char build[64];
    std::snprintf(build, sizeof build, "snapshot %.0f ms", shown_.build_s * 1e3);
    add(build);
    add(shown_.analysed ? "analyses shown" : feed_.analyses_on() ? "analyses: next snapshot"
                                                                 : "analyses on demand (or when it ends)");
  }
  ImGui::TextUnformatted(line.c_str());
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

void LiveView::draw_save_popup() {
  if (save_popup_) {
    ImGui::OpenPopup("Save capture");
    save_popup_ = false;
    if (!*save_path_)
      std::snprintf(save_path_, sizeof save_path_, "capture-%u.json.gz", status_.info.pid);
  }
  if (!ImGui::BeginPopupModal("Save capture", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  ImGui::TextUnformatted("Kineto JSON (gzip when the name ends in .gz):");
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 30);
  bool enter = ImGui::InputText("##path", save_path_, sizeof save_path_, ImGuiInputTextFlags_EnterReturnsTrue);
  if (ImGui::Button("Save") || enter) {
    if (std::string e = save(save_path_, false); !e.empty()) save_message_ = e;
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}

void LiveView::write_state(JsonWriter& w, Workspace& ws) const {
  const capture::LiveStatus& s = status_;
  w.begin_object().field("socket", socket_).field("listening", s.listening).field("connected", s.connected);
  w.field("has_capture", s.has_capture).field("program", s.info.process_name).field("pid", uint64_t(s.info.pid));
  w.field("records", s.records).field("kernels", s.kernels).field("batches", s.batches);
  w.field("dropped_ours", s.drops.dropped_buffer).field("dropped_cupti", s.drops.dropped_cupti);
  w.field("ended", s.ended).field("cut", s.cut).field("refused", s.refused).field("note", s.note);
  w.field("store_kernels", shown_.kernels).field("store_records", shown_.records).field("snapshots", shown_.snapshots);
  w.field("final_shown", shown_.final).field("analyses_shown", shown_.analysed).field("analyses_on", feed_.analyses_on());
  w.field("last_build_ms", shown_.build_s * 1e3).field("command", command_hint());
  TimelineView* tl = ws.timeline();
  w.field("following", tl && tl->following());
  w.key("store_end_ns");
  ws.store() ? w.value(int64_t(ws.store()->end_ns)) : w.null();
  w.field("save_message", save_message_);
  w.end_object();
}

}  // namespace sl::views
