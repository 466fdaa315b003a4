// Internal: the assets/ folder of a .keras archive. Keras 3 stores there what a layer keeps
// outside its variables; of Strata's layers only the lookups have any: a StringLookup or
// IntegerLookup whose vocabulary was adapted (not passed to the constructor) saves it as
// assets/<layer path>/vocabulary.txt, one token per line, special tokens first
// (IndexLookup.save_assets), and its config says "vocabulary": null.
#pragma once

#include "framework/model/model.h"
#include "framework/saving/keras_archive.h"

namespace strata {

// Sets the vocabulary of every lookup layer of `model` (nested models included) that has a
// vocabulary file in `archive`, as Keras' load_assets does. ValueError naming the file and the
// line for a token an IntegerLookup cannot read.
void load_lookup_assets(const saving::KerasArchive& archive, Model& model);

}  // namespace strata
