// views/pixel_image.h: without hooks no texture (views then draw rectangles); with them one
// texture per image, created once, uploaded only when its pixels changed, destroyed with it.
#include <doctest/doctest.h>

#include <map>

#include "views/pixel_image.h"

using namespace sl::views;

TEST_CASE("pixel image: a texture only through hooks, uploaded when changed") {
  set_texture_hooks({});
  {
    PixelImage none;
    none.resize(4, 2);
    CHECK_FALSE(textures_available());
    CHECK(none.texture() == nullptr);
    none.upload();  // nothing to upload to
  }
  int created = 0, destroyed = 0;
  std::map<int, std::vector<uint32_t>> uploads;  // per upload, the pixels
  set_texture_hooks({[&] { return ImTextureID(intptr_t(++created)); },
                     [&](ImTextureID, int w, int h, const uint32_t* p) { uploads[int(uploads.size())].assign(p, p + w * h); },
                     [&](ImTextureID) { ++destroyed; }});
  {
    PixelImage image;
    CHECK(image.resize(3, 2));
    CHECK_FALSE(image.resize(3, 2));
    ImTextureID id = image.texture();
    CHECK(id != nullptr);
    image.row(1)[2] = 0xFF0000FFu;
    image.upload();
    image.upload();  // unchanged: no second upload
    REQUIRE(uploads.size() == 1);
    CHECK(uploads[0] == std::vector<uint32_t>{0, 0, 0, 0, 0, 0xFF0000FFu});
    CHECK(image.resize(2, 2));  // a new size: cleared, uploaded again, the same texture
    image.upload();
    REQUIRE(uploads.size() == 2);
    CHECK(uploads[1] == std::vector<uint32_t>(4, 0));
    CHECK(image.texture() == id);
    CHECK(created == 1);
  }
  CHECK(destroyed == 1);
  set_texture_hooks({});
}
