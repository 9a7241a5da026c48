#include "views/file_browser.h"

#include <imgui.h>

#include <algorithm>
#include <cstring>

#include "core/present/time_axis.h"

namespace sl::views {
namespace fs = std::filesystem;

static bool is_trace(const fs::path& p) {
  std::string name = p.filename().string();
  return name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".sqlite") ||
         name.ends_with(".sqlite.gz") || name.ends_with(".nsys-rep") ||  // Nsight Systems reports
         name.ends_with(".slsnap");  // snapshots (core/snapshot/SNAPSHOT.md)
}

FileBrowser::FileBrowser() { set_folder(fs::current_path()); }

void FileBrowser::set_folder(const fs::path& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return;
  folder_ = fs::absolute(folder);
  std::snprintf(path_text_, sizeof path_text_, "%s", folder_.c_str());
  refresh();
}

void FileBrowser::refresh() {
  entries_.clear();
  error_.clear();
  std::error_code ec;
  for (fs::directory_iterator it(folder_, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().starts_with(".")) continue;
    if (it->is_directory(ec) || is_trace(it->path())) entries_.push_back(*it);
  }
  if (ec) error_ = ec.message();
  std::sort(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) {
    std::error_code e;
    bool da = a.is_directory(e), db = b.is_directory(e);
    return da != db ? da : a.path().filename() < b.path().filename();
  });
}

std::optional<std::string> FileBrowser::draw(bool* open) {
  std::optional<std::string> chosen;
  ImGui::SetNextWindowSize(ImVec2(640, 440), ImGuiCond_FirstUseEver);
  if (!ImGui::Begin("Open trace", open)) {
    ImGui::End();
    return chosen;
  }
  if (ImGui::Button("Up")) set_folder(folder_.parent_path());
  ImGui::SameLine();
  // A folder of rank traces opens as one job tab (the window's open() treats a folder as a job).
  if (ImGui::Button("Open this folder as a job")) chosen = folder_.string();
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-1);
  if (ImGui::InputText("##path", path_text_, sizeof path_text_, ImGuiInputTextFlags_EnterReturnsTrue)) {
    fs::path typed(path_text_);
    std::error_code ec;
    if (fs::is_directory(typed, ec)) set_folder(typed);
    else if (fs::exists(typed, ec)) chosen = typed.string();
  }
  if (!error_.empty()) ImGui::TextColored(ImVec4(0.8f, 0.3f, 0.1f, 1), "%s", error_.c_str());
  ImGui::BeginChild("entries");
  for (const auto& e : entries_) {
    std::error_code ec;
    bool dir = e.is_directory(ec);
    std::string label = (dir ? "[dir] " : "") + e.path().filename().string();
    if (!dir) {
      double mb = double(e.file_size(ec)) / 1e6;
      char size[32];
      std::snprintf(size, sizeof size, "   %.1f MB", mb);
      label += size;
    }
    if (ImGui::Selectable(label.c_str(), false, ImGuiSelectableFlags_AllowDoubleClick) && ImGui::IsMouseDoubleClicked(0)) {
      if (dir) {
        set_folder(e.path());
        break;
      }
      chosen = e.path().string();
    }
  }
  ImGui::EndChild();
  ImGui::End();
  if (chosen) *open = false;
  return chosen;
}

}  // namespace sl::views
