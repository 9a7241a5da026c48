#include "views/pixel_image.h"

namespace sl::views {
namespace {
TextureHooks& hooks() {
  static TextureHooks h;
  return h;
}
}  // namespace

void set_texture_hooks(TextureHooks h) { hooks() = std::move(h); }
bool textures_available() { return bool(hooks().create) && bool(hooks().upload); }

PixelImage::~PixelImage() {
  if (texture_ && hooks().destroy) hooks().destroy(texture_);
}

bool PixelImage::resize(int w, int h) {
  if (w == w_ && h == h_) return false;
  w_ = w, h_ = h;
  pixels_.assign(size_t(w) * size_t(h), 0);
  changed_ = true;
  return true;
}

ImTextureID PixelImage::texture() {
  if (!texture_ && textures_available()) texture_ = hooks().create();
  return texture_;
}

void PixelImage::upload() {
  if (!changed_ || !texture() || w_ <= 0 || h_ <= 0) return;
  hooks().upload(texture_, w_, h_, pixels_.data());
  changed_ = false;
}

}  // namespace sl::views
