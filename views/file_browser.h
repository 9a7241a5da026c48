// File > Open: a small browser drawn in ImGui (no native dialog dependency), showing folders
// and .json / .json.gz traces, remembering the last folder.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sl::views {

class FileBrowser {
public:
  FileBrowser();
  void set_folder(const std::filesystem::path& folder);
  // Draws the browser window while *open; returns the chosen file once.
  std::optional<std::string> draw(bool* open);

private:
  void refresh();
  std::filesystem::path folder_;
  std::vector<std::filesystem::directory_entry> entries_;
  std::string error_;
  char path_text_[1024] = "";
};

}  // namespace sl::views
