// The views' pixel images (views/pixel_image.h) as OpenGL textures: nearest-neighbour sampled,
// so a texel stays a crisp pixel; redefined when an upload's size differs from the texture's.
#include <glad/gl.h>

#include <cstdint>
#include <unordered_map>
#include <utility>

#include "app/gui_window_app.h"
#include "views/pixel_image.h"

namespace sl::gui {
namespace {

GLuint name_of(ImTextureID id) { return GLuint(reinterpret_cast<intptr_t>(id)); }

std::unordered_map<GLuint, std::pair<int, int>>& sizes() {  // per texture: its storage's size
  static std::unordered_map<GLuint, std::pair<int, int>> s;
  return s;
}

ImTextureID create_texture() {
  GLuint name = 0;
  glGenTextures(1, &name);
  glBindTexture(GL_TEXTURE_2D, name);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glBindTexture(GL_TEXTURE_2D, 0);
  sizes()[name] = {0, 0};
  return reinterpret_cast<ImTextureID>(intptr_t(name));
}

void upload_texture(ImTextureID id, int w, int h, const uint32_t* rgba) {
  GLuint name = name_of(id);
  glBindTexture(GL_TEXTURE_2D, name);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  std::pair<int, int>& size = sizes()[name];
  if (size == std::pair(w, h)) {
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
  } else {
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    size = {w, h};
  }
  glBindTexture(GL_TEXTURE_2D, 0);
}

void destroy_texture(ImTextureID id) {
  GLuint name = name_of(id);
  glDeleteTextures(1, &name);
  sizes().erase(name);
}

}  // namespace

void install_gl_textures() { views::set_texture_hooks({create_texture, upload_texture, destroy_texture}); }
void remove_gl_textures() { views::set_texture_hooks({}); }

}  // namespace sl::gui
