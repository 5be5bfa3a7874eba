#include "gui/model/gif.h"

#include <gif_lib.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd::gui {
namespace {

// Colours are counted in buckets of 5 bits per channel: 32768 of them.
constexpr int kBuckets = 1 << 15;
constexpr int kMaxColours = 256;

int bucket_of(const uint8_t* rgb) {
  return (rgb[0] >> 3) << 10 | (rgb[1] >> 3) << 5 | rgb[2] >> 3;
}

// A rectangle [x0, x1) x [y0, y1) of a frame.
struct PixelRect {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  int width() const { return x1 - x0; }
  int height() const { return y1 - y0; }
};

// A rectangle's pixels as indices into its palette.
struct Indexed {
  std::vector<GifColorType> palette;
  std::vector<GifPixelType> pixels;  // (height, width)
};

struct BucketSum {
  uint64_t count = 0, r = 0, g = 0, b = 0;
};

int distance2(GifColorType a, GifColorType b) {
  const int dr = a.Red - b.Red, dg = a.Green - b.Green, db = a.Blue - b.Blue;
  return dr * dr + dg * dg + db * db;
}

// A bucket's colour: the average of the pixels in it (a flat colour's own, when alone).
GifColorType average(const BucketSum& s) {
  const auto channel = [&](uint64_t sum) {
    return static_cast<GifByteType>((sum + s.count / 2) / s.count);
  };
  return GifColorType{channel(s.r), channel(s.g), channel(s.b)};
}

// The palette: buckets' colours by how many pixels they hold, first those at least
// kSpread from every colour taken (so that a small packet's hue gets its own entry before
// the hundredth shade of antialiased text), then the rest, up to 256. A UI's flat colours
// come out exact; on the frames of docs/screenshots no channel is off by more than ~25.
// `index_of` maps every bucket seen to its entry, or to the nearest one.
std::vector<GifColorType> choose_palette(const std::vector<BucketSum>& sums, std::vector<int>& seen,
                                         std::vector<int>& index_of) {
  constexpr int kSpread = 20;
  std::sort(seen.begin(), seen.end(), [&](int a, int b) {
    return sums[a].count > sums[b].count || (sums[a].count == sums[b].count && a < b);
  });
  std::vector<GifColorType> palette;
  std::vector<char> taken(seen.size(), 0);
  const auto nearest = [&](GifColorType c) {
    int best = 0;
    for (size_t p = 1; p < palette.size(); ++p)
      if (distance2(c, palette[p]) < distance2(c, palette[best])) best = static_cast<int>(p);
    return best;
  };
  for (int spread : {kSpread, 0})
    for (size_t i = 0; i < seen.size() && palette.size() < kMaxColours; ++i) {
      const GifColorType c = average(sums[seen[i]]);
      if (taken[i] || (!palette.empty() && distance2(c, palette[nearest(c)]) < spread * spread))
        continue;
      taken[i] = 1;
      index_of[seen[i]] = static_cast<int>(palette.size());
      palette.push_back(c);
    }
  for (size_t i = 0; i < seen.size(); ++i)
    if (!taken[i]) index_of[seen[i]] = nearest(average(sums[seen[i]]));
  return palette;
}

Indexed quantise(const Image& image, PixelRect box) {
  std::vector<BucketSum> sums(kBuckets);
  std::vector<int> seen;
  const auto at = [&](int x, int y) {
    return image.rgb.data() + (static_cast<size_t>(y) * image.width + x) * 3;
  };
  for (int y = box.y0; y < box.y1; ++y)
    for (int x = box.x0; x < box.x1; ++x) {
      const uint8_t* p = at(x, y);
      BucketSum& s = sums[bucket_of(p)];
      if (s.count++ == 0) seen.push_back(bucket_of(p));
      s.r += p[0], s.g += p[1], s.b += p[2];
    }
  std::vector<int> index_of(kBuckets, 0);
  Indexed out;
  out.palette = choose_palette(sums, seen, index_of);
  out.pixels.reserve(static_cast<size_t>(box.width()) * box.height());
  for (int y = box.y0; y < box.y1; ++y)
    for (int x = box.x0; x < box.x1; ++x)
      out.pixels.push_back(static_cast<GifPixelType>(index_of[bucket_of(at(x, y))]));
  return out;
}

// The smallest rectangle that holds every pixel where a and b (of one size) differ; empty
// (width 0) when they are the same.
PixelRect changed_box(const Image& a, const Image& b) {
  const size_t row = static_cast<size_t>(a.width) * 3;
  const auto row_differs = [&](int y) {
    return std::memcmp(a.rgb.data() + y * row, b.rgb.data() + y * row, row) != 0;
  };
  PixelRect box{.x0 = a.width, .y0 = 0, .x1 = 0, .y1 = a.height};
  while (box.y0 < a.height && !row_differs(box.y0))
    ++box.y0;
  if (box.y0 == a.height) return PixelRect{};
  while (!row_differs(box.y1 - 1))
    --box.y1;
  for (int y = box.y0; y < box.y1; ++y) {
    const uint8_t* pa = a.rgb.data() + y * row;
    const uint8_t* pb = b.rgb.data() + y * row;
    int x0 = 0, x1 = a.width;
    while (x0 < box.x0 && std::memcmp(pa + x0 * 3, pb + x0 * 3, 3) == 0)
      ++x0;
    while (x1 > box.x1 && std::memcmp(pa + (x1 - 1) * 3, pb + (x1 - 1) * 3, 3) == 0)
      --x1;
    box.x0 = std::min(box.x0, x0);
    box.x1 = std::max(box.x1, x1);
  }
  return box;
}

// `frame` as a width x height image: cut where larger, black where smaller.
Image fit(const Image& frame, int width, int height) {
  if (frame.width == width && frame.height == height) return frame;
  Image out{.width = width, .height = height};
  out.rgb.assign(static_cast<size_t>(width) * height * 3, 0);
  const size_t row = static_cast<size_t>(std::min(width, frame.width)) * 3;
  for (int y = 0; y < std::min(height, frame.height); ++y)
    std::memcpy(out.rgb.data() + static_cast<size_t>(y) * width * 3,
                frame.rgb.data() + static_cast<size_t>(y) * frame.width * 3, row);
  return out;
}

int write_to_stream(GifFileType* gif, const GifByteType* bytes, int size) {
  auto* out = static_cast<std::ostream*>(gif->UserData);
  out->write(reinterpret_cast<const char*>(bytes), size);
  return out->good() ? size : 0;
}

struct MapDeleter {
  void operator()(ColorMapObject* map) const { GifFreeMapObject(map); }
};
using ColourMap = std::unique_ptr<ColorMapObject, MapDeleter>;

// A colour map of a power-of-two size (giflib's rule), at least 2, padded with black.
ColourMap make_colour_map(std::vector<GifColorType> palette) {
  size_t size = 2;
  while (size < palette.size())
    size *= 2;
  palette.resize(size, GifColorType{0, 0, 0});
  return ColourMap(GifMakeMapObject(static_cast<int>(size), palette.data()));
}

}  // namespace

GifWriter::GifWriter(std::string path) : file_(std::move(path)) {}

GifWriter::~GifWriter() {
  int error = 0;
  if (gif_) EGifCloseFile(gif_, &error);  // the temporary is removed after this
}

void GifWriter::fail(const char* what) const {
  const int code = gif_ ? gif_->Error : E_GIF_ERR_NOT_ENOUGH_MEM;
  const char* reason = GifErrorString(code);
  throw DataError(fmt::format("cannot write '{}': {}: {}; check the path and the free disk space",
                              path(), what, reason ? reason : "giflib error"));
}

void GifWriter::open(int width, int height) {
  int error = 0;
  gif_ = EGifOpen(&file_.stream(), write_to_stream, &error);
  if (!gif_) throw DataError(fmt::format("cannot write '{}': {}", path(), GifErrorString(error)));
  EGifSetGifVersion(gif_, true);  // GIF89a: frame delays and looping
  if (EGifPutScreenDesc(gif_, width, height, 8, 0, nullptr) == GIF_ERROR)
    fail("the screen descriptor");
  // The NETSCAPE2.0 block: loop for ever, as a slide wants.
  const GifByteType loop[3] = {1, 0, 0};
  if (EGifPutExtensionLeader(gif_, APPLICATION_EXT_FUNC_CODE) == GIF_ERROR ||
      EGifPutExtensionBlock(gif_, 11, "NETSCAPE2.0") == GIF_ERROR ||
      EGifPutExtensionBlock(gif_, 3, loop) == GIF_ERROR ||
      EGifPutExtensionTrailer(gif_) == GIF_ERROR)
    fail("the loop extension");
}

void GifWriter::put_frame(const Image& frame, int x0, int y0, int x1, int y1, int delay_cs) {
  const PixelRect box{x0, y0, x1, y1};
  GraphicsControlBlock control{.DisposalMode = DISPOSE_DO_NOT,
                               .UserInputFlag = false,
                               .DelayTime = std::clamp(delay_cs, 0, 65535),
                               .TransparentColor = NO_TRANSPARENT_COLOR};
  GifByteType extension[4];
  const size_t length = EGifGCBToExtension(&control, extension);
  if (EGifPutExtension(gif_, GRAPHICS_EXT_FUNC_CODE, static_cast<int>(length), extension) ==
      GIF_ERROR)
    fail("a frame's delay");
  Indexed indexed = quantise(frame, box);
  const ColourMap map = make_colour_map(std::move(indexed.palette));
  if (!map) fail("a colour map");
  if (EGifPutImageDesc(gif_, box.x0, box.y0, box.width(), box.height(), false, map.get()) ==
          GIF_ERROR ||
      EGifPutLine(gif_, indexed.pixels.data(), static_cast<int>(indexed.pixels.size())) ==
          GIF_ERROR)
    fail("a frame");
}

void GifWriter::add_frame(const Image& frame, int delay_cs) {
  if (frame.width <= 0 || frame.height <= 0 || frame.width > 65535 || frame.height > 65535)
    throw DataError(
        fmt::format("{}: no frame to record ({}x{})", path(), frame.width, frame.height));
  if (!gif_) {
    open(frame.width, frame.height);
    previous_ = frame;
    put_frame(previous_, 0, 0, frame.width, frame.height, delay_cs);
    ++frames_;
    return;
  }
  Image current = fit(frame, previous_.width, previous_.height);
  PixelRect box = changed_box(current, previous_);
  if (box.width() == 0) box = PixelRect{0, 0, 1, 1};  // nothing changed: one pixel holds the delay
  put_frame(current, box.x0, box.y0, box.x1, box.y1, delay_cs);
  previous_ = std::move(current);
  ++frames_;
}

void GifWriter::finish() {
  if (!gif_) throw DataError(fmt::format("{}: no frame was recorded; nothing written", path()));
  int error = 0;
  GifFileType* gif = std::exchange(gif_, nullptr);
  if (EGifCloseFile(gif, &error) == GIF_ERROR)
    throw DataError(fmt::format("cannot write '{}': {}; check the free disk space", path(),
                                GifErrorString(error)));
  file_.commit();
}

GifFrames read_gif(const std::string& path) {
  int error = 0;
  GifFileType* gif = DGifOpenFileName(path.c_str(), &error);
  if (!gif)
    throw DataError(fmt::format("{}: not a readable GIF ({})", path, GifErrorString(error)));
  const auto close = [](GifFileType* g) {
    int e = 0;
    DGifCloseFile(g, &e);
  };
  std::unique_ptr<GifFileType, decltype(close)> closer(gif, close);
  if (DGifSlurp(gif) == GIF_ERROR)
    throw DataError(fmt::format("{}: not a readable GIF ({})", path, GifErrorString(gif->Error)));
  GifFrames out{.width = gif->SWidth, .height = gif->SHeight};
  Image canvas{.width = out.width, .height = out.height};
  canvas.rgb.assign(static_cast<size_t>(out.width) * out.height * 3, 0);
  for (int i = 0; i < gif->ImageCount; ++i) {
    const SavedImage& image = gif->SavedImages[i];
    const GifImageDesc& d = image.ImageDesc;
    const ColorMapObject* map = d.ColorMap ? d.ColorMap : gif->SColorMap;
    if (!map) throw DataError(fmt::format("{}: frame {} has no colour map", path, i));
    GraphicsControlBlock control{.TransparentColor = NO_TRANSPARENT_COLOR};
    if (DGifSavedExtensionToGCB(gif, i, &control) == GIF_ERROR)  // no control block
      control = GraphicsControlBlock{.TransparentColor = NO_TRANSPARENT_COLOR};
    for (int y = 0; y < d.Height && d.Top + y < out.height; ++y)
      for (int x = 0; x < d.Width && d.Left + x < out.width; ++x) {
        const int index = image.RasterBits[static_cast<size_t>(y) * d.Width + x];
        if (index >= map->ColorCount || index == control.TransparentColor) continue;
        uint8_t* p =
            canvas.rgb.data() + (static_cast<size_t>(d.Top + y) * out.width + d.Left + x) * 3;
        p[0] = map->Colors[index].Red, p[1] = map->Colors[index].Green,
        p[2] = map->Colors[index].Blue;
      }
    out.frames.push_back(canvas);
    out.delays_cs.push_back(control.DelayTime);
  }
  return out;
}

}  // namespace dsgd::gui
