// Pictures drawn from their pixels (issue 38's frame target): a view fills an RGBA image and
// draws it with ImDrawList::AddImage, one quad, instead of a rectangle per run of pixels. Views
// have no GL: the app registers the hooks that turn pixels into a texture (app/gui_textures.cpp,
// OpenGL; `bench frame` registers copying ones). Without hooks (headless: `render`, figures,
// doctests) `textures_available()` is false and views draw their rectangles as before.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace sl::views {

struct TextureHooks {
  std::function<ImTextureID()> create;  // a new, empty texture (nearest-neighbour sampling)
  // The texture's pixels from now on: w × h RGBA (IM_COL32 order), rows top first; its size may
  // differ from the last upload's.
  std::function<void(ImTextureID, int w, int h, const uint32_t* rgba)> upload;
  std::function<void(ImTextureID)> destroy;
};

// Registered once at start; empty hooks (before the renderer goes) make textures unavailable,
// and images destroyed after that leave their textures to the renderer's end.
void set_texture_hooks(TextureHooks hooks);
bool textures_available();

// A texture's pixels, uploaded when changed: resize, write rows, then upload() once a frame
// (before the frame renders; the texture's id stays the same across sizes).
class PixelImage {
public:
  PixelImage() = default;
  ~PixelImage();
  PixelImage(const PixelImage&) = delete;
  PixelImage& operator=(const PixelImage&) = delete;

  // True when the size changed (the pixels are then cleared to transparent).
  bool resize(int w, int h);
  int width() const { return w_; }
  int height() const { return h_; }
  uint32_t* row(int y) {  // marks the image changed
    changed_ = true;
    return pixels_.data() + size_t(y) * size_t(w_);
  }
  ImTextureID texture();  // created on first use; null without hooks
  void upload();          // the pixels to the texture, when they changed since the last upload

private:
  std::vector<uint32_t> pixels_;
  int w_ = 0, h_ = 0;
  bool changed_ = false;
  ImTextureID texture_ = nullptr;
};

}  // namespace sl::views
