// Colours that can be read: the contrast of two colours as WCAG 2 defines it (1 to 21; text
// wants 4.5, a shape against its background 3), the text colour for a coloured bar (black or
// white, whichever its luminance asks for), and a fill nudged until its text reads. Used by
// the themes and by every view that writes on a colour. Not the palette itself (theme.h).
#pragma once

#include "gui/model/layout.h"

namespace dsgd::gui {

// Relative luminance of the colour's RGB (alpha ignored), 0 (black) to 1 (white).
double relative_luminance(Rgba colour);
// (L_lighter + 0.05) / (L_darker + 0.05).
double contrast_ratio(Rgba a, Rgba b);
// Black or white: the one with the higher contrast on `background` (at least 4.58:1).
Rgba text_colour_on(Rgba background);
// `top` painted over the opaque `bottom` with top's alpha; the result is opaque.
Rgba over(Rgba top, Rgba bottom);
// `fill` (opaque) mixed towards white or black, away from `against` (a text colour, or the
// frame a mark sits on), just until the two reach `min_ratio` (or fully, when even that
// does not).
Rgba legible_fill(Rgba fill, Rgba against, double min_ratio);

}  // namespace dsgd::gui
