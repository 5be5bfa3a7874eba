// The views: immediate-mode ImGui drawing of one Snapshot. Each draws into the current
// window's remaining content region and pushes Commands for what the user asked; none
// keeps state of its own between frames (zoom, selection, edits travel through
// ViewSettings; the GL images the topology paints into, the dashboard's tiling and the
// message log's last scroll are a ViewState the window owns).
#pragma once

#include <string>
#include <vector>

#include "gui/model/commands.h"
#include "gui/model/exporter.h"
#include "gui/model/snapshot.h"
#include "gui/model/ui_text.h"
#include "gui/views/disc_layer.h"
#include "gui/views/line_layer.h"
#include "gui/views/window_tiling.h"

struct ImVec2;

namespace dsgd::gui {

// What the views keep between frames: the topology's GL images (its links, and its packets
// painted over them) and whether the windows tile the display as laid out. Made after the
// GL context and destroyed before it, by the window that owns the context.
struct TopologyLayers {
  LineLayer links;
  DiscLayer packets;
};
// The message log's memory of the last frame: the selection it last scrolled to (a message
// selected elsewhere is scrolled into sight once, then the user may scroll away).
struct MessageLogState {
  int scrolled_to = -1;
};
struct ViewState {
  TopologyLayers topology;
  bool tiled = false;   // every window is where draw_dashboard put it
  ViewWindows windows;  // where each view's window was, for a PNG of one view
  WindowTiling tiling;
  MessageLogState messages;
};

void draw_topology(const Snapshot& snapshot, Commands& commands, TopologyLayers& layers);
void draw_convergence(const Snapshot& snapshot, Commands& commands);
void draw_timeline(const Snapshot& snapshot, Commands& commands);
// The timeline's legend (timeline_legend.cpp): lanes, colours, message marks.
// `dense_messages`: the messages in view when there are too many to draw as lines (their
// ends only, which the legend then says), else 0.
void draw_timeline_legend(const Snapshot& snapshot, size_t dense_messages);
void draw_gradients(const Snapshot& snapshot, Commands& commands);
void draw_controls(const Snapshot& snapshot, Commands& commands);
// The classroom panel (dsgd-gui --classroom): how to join, who has, and Start.
void draw_classroom(const Snapshot& snapshot, Commands& commands);
// The lesson panel (view_lesson.cpp), and its lesson and language picker alone.
void draw_lesson(const Snapshot& snapshot, Commands& commands);
void draw_lesson_picker(const Snapshot& snapshot, Commands& commands);

// The message log (view_messages.cpp) and where the time goes (view_time.cpp).
void draw_messages(const Snapshot& snapshot, Commands& commands, MessageLogState& state);
void draw_time_breakdown(const Snapshot& snapshot, Commands& commands);
// The dashboard's bottom window: tabs for the timeline, the message log and where the time
// goes (ViewSettings::bottom), and the chosen one under them (view_tabs.cpp).
void draw_bottom_tabs(const Snapshot& snapshot, Commands& commands, ViewState& state);
// Its window's title: the chosen tab's, with the timeline window's ImGui ID.
std::string bottom_window_title(const Snapshot& snapshot);
// The all_reduce demo's caption (where it stands, from the fold's phases), the choice of
// values (now, before, after: sum, after: sum / N) and what they are, above its bars
// (view_demo.cpp). Returns the values to draw, [rank][element].
std::vector<std::vector<float>> demo_header(const Snapshot& snapshot, Commands& commands);
// The controls' speed presets (0.01x .. 10x) and a replay's bookmarks (view_pace.cpp).
void speed_presets(const Snapshot& snapshot, Commands& commands);
void bookmark_list(const Snapshot& snapshot, Commands& commands);

// One view into the current window (nothing for View::all).
void draw_view(View view, const Snapshot& snapshot, Commands& commands, ViewState& state);

// Places one window per view over the display (or one window filling it for `only`), and
// an error window when the snapshot carries an error. `fixed` pins windows in place every
// frame (headless screenshots); otherwise they start there and the user may move them.
// The windows fill view_rect (tiling.h), again whenever the display, the font or the
// language changes or the user asks ("Reset layout"); with a lesson open its panel replaces
// the convergence and gradient views, and in the all_reduce demo the gradient view replaces
// the convergence view. The timeline's window holds the message log and where the time goes
// as tabs (draw_bottom_tabs).
void draw_dashboard(const Snapshot& snapshot, Commands& commands, View only, bool fixed,
                    ViewState& state);

}  // namespace dsgd::gui
