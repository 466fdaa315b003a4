// Reading TensorBoard event files back: every Event of a file, and the event files of a log
// directory. For tests, and for tools that post-process training curves.
//
//   for (const auto& file : summary::list_event_files("logs/train"))
//     for (const auto& e : summary::read_events(file))
//       for (const auto& s : e.scalars) std::cout << s.tag << " " << e.step << " " << s.value;
#pragma once

#include <string>
#include <vector>

#include "framework/summary/event.h"

namespace strata::summary {

// The events of `path` in file order, the file_version event first. IOError when the file cannot
// be opened; ValueError when a record is corrupt or is not an Event.
std::vector<Event> read_events(const std::string& path);

// The paths of the event files ("events.out.tfevents.*") directly in `logdir`, oldest first:
// sorted by the numbers in their names (creation time, pid, writer counter). Empty when the
// directory does not exist.
std::vector<std::string> list_event_files(const std::string& logdir);

}  // namespace strata::summary
