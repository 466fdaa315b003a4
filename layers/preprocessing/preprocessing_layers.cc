#include "layers/preprocessing/preprocessing_layers.h"

#include "layers/preprocessing/hashing.h"
#include "layers/preprocessing/integer_lookup.h"
#include "layers/preprocessing/normalization.h"
#include "layers/preprocessing/random_crop.h"
#include "layers/preprocessing/random_flip.h"
#include "layers/preprocessing/random_translation.h"
#include "layers/preprocessing/rescaling.h"
#include "layers/preprocessing/string_lookup.h"

namespace strata {

std::map<std::string, LayerFactory> preprocessing_layer_factories() {
  return {
      {"Hashing", &Hashing::from_config},
      {"IntegerLookup", &IntegerLookup::from_config},
      {"Normalization", &Normalization::from_config},
      {"RandomCrop", &RandomCrop::from_config},
      {"RandomFlip", &RandomFlip::from_config},
      {"RandomTranslation", &RandomTranslation::from_config},
      {"Rescaling", &Rescaling::from_config},
      {"StringLookup", &StringLookup::from_config},
  };
}

}  // namespace strata
