// CSVLogger: Keras' callback that writes one CSV row per epoch.
//
//   auto csv = std::make_shared<CSVLogger>("run/log.csv");   // (filename, separator, append)
//
// The file is the one Python's csv module writes for Keras 2.15 (so existing scripts parse it
// unchanged):
//   epoch,accuracy,loss,val_accuracy,val_loss\r\n      header: "epoch", then the first epoch's
//   0,0.5625,0.6931471824645996,0.5,0.7013...\r\n      log keys sorted; rows: epoch 0-based,
//                                                      values as Python's repr(float)
// - lines end in "\r\n" (the csv module's excel dialect);
// - when the first epoch's logs have no val_* key, "val_<key>" columns are added for every key
//   (validation may start later with validation_freq > 1); a value missing from an epoch's logs
//   is written "NA" (so a fit without validation has NA val_* columns, as in Keras 2.15);
// - fields holding the separator, a quote or a line break are quoted ("a,b" -> "\"a,b\"");
// - the file is opened (truncated, or appended to with append) at train begin, flushed after
//   every row and closed at train end; append writes no second header into a non-empty file.
#pragma once

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "framework/callbacks/callback.h"

namespace strata {

class CSVLogger : public Callback {
 public:
  bool implements_batch_hooks() const override { return false; }  // epoch-level only
  // ValueError when separator is not one character.
  explicit CSVLogger(std::string filename, std::string separator = ",", bool append = false);

  // IOError naming the file when it cannot be opened or written.
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_end(const Logs& logs) override;

  const std::string& filename() const { return filename_; }

 private:
  std::string field(const std::string& text) const;  // quoted when it must be
  void write_line(const std::vector<std::string>& fields);

  std::string filename_;
  char separator_;
  bool append_;
  std::ofstream file_;
  bool write_header_ = true;
  std::optional<std::vector<std::string>> keys_;  // the columns after "epoch", fixed by epoch 1
};

}  // namespace strata
