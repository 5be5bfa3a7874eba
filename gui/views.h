// The views: immediate-mode ImGui drawing of one Snapshot. Each draws into the current
// window's remaining content region and pushes Commands for what the user asked; none
// keeps state between frames (zoom, selection, edits travel through ViewSettings).
// Not the layout of the window: main.cpp places the windows (draw_dashboard).
#pragma once

#include "gui/commands.h"
#include "gui/snapshot.h"

struct ImVec2;

namespace dsgd::gui {

void draw_topology(const Snapshot& snapshot, Commands& commands);
void draw_convergence(const Snapshot& snapshot, Commands& commands);
void draw_timeline(const Snapshot& snapshot, Commands& commands);
void draw_gradients(const Snapshot& snapshot, Commands& commands);
void draw_controls(const Snapshot& snapshot, Commands& commands);
// The lesson panel (view_lesson.cpp), and its lesson and language picker alone.
void draw_lesson(const Snapshot& snapshot, Commands& commands);
void draw_lesson_picker(const Snapshot& snapshot, Commands& commands);

// Places one window per view over the display (or one window filling it for `only`), and
// an error window when the snapshot carries an error. `fixed` pins windows in place every
// frame (headless screenshots); otherwise they start there and the user may move them.
// The windows fill view_rect (layout.h); with a lesson open its panel replaces the
// convergence and gradient views.
void draw_dashboard(const Snapshot& snapshot, Commands& commands, View only, bool fixed);

}  // namespace dsgd::gui
