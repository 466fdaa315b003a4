#include "framework/saving/hdf5_file.h"

#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "framework/core/error.h"
#include "framework/saving/file_checksum.h"
#include "framework/saving/hdf5_vlen_strings.h"

namespace strata::saving::hdf5 {

static_assert(sizeof(hid_t) == sizeof(int64_t), "HDF5 ids are carried as int64_t");

namespace {

// Never destroyed: handles closed from other static destructors at exit still find it.
std::recursive_mutex& library_mutex() {
  static auto* m = new std::recursive_mutex;
  return *m;
}

void close_file(int64_t id) { H5Fclose(hid_t(id)); }
void close_group(int64_t id) { H5Gclose(hid_t(id)); }
void close_dataset(int64_t id) { H5Dclose(hid_t(id)); }
void close_attribute(int64_t id) { H5Aclose(hid_t(id)); }
void close_type(int64_t id) { H5Tclose(hid_t(id)); }
void close_space(int64_t id) { H5Sclose(hid_t(id)); }
void close_plist(int64_t id) { H5Pclose(hid_t(id)); }

// The innermost (most specific) description on HDF5's error stack, e.g. "file signature not
// found"; the stack is cleared.
herr_t keep_innermost(unsigned, const H5E_error2_t* err, void* data) {
  if (err->desc != nullptr && err->desc[0] != '\0') *static_cast<std::string*>(data) = err->desc;
  return 0;
}

std::string hdf5_detail() {
  std::string desc;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keep_innermost, &desc);
  H5Eclear2(H5E_DEFAULT);
  return desc.empty() ? "" : " (HDF5: " + desc + ")";
}

// A handle owning `id`, or an invalid one when `id` is negative (an HDF5 failure).
Handle own(hid_t id, void (*close)(int64_t)) {
  return id < 0 ? Handle() : Handle(int64_t(id), close);
}

hid_t id_of(const Handle& h) { return hid_t(h.id()); }

bool is_ascii(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

H5T_cset_t charset_for(const std::vector<std::string>& values) {
  return std::all_of(values.begin(), values.end(), is_ascii) ? H5T_CSET_ASCII : H5T_CSET_UTF8;
}

// Splits "a/b/c" into its non-empty components.
std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = std::min(path.find('/', start), path.size());
    if (end > start) out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// A link on a path that is not a hard link (soft, external or user-defined): its path from
// the group asked and where it points ("file.h5:/path" for an external link).
struct ForeignLink {
  std::string path;
  std::string kind;  // with its article: "a soft", "an external"
  std::string target;
};

ForeignLink describe_link(hid_t loc, const std::string& path, const H5L_info_t& info) {
  ForeignLink link{path, "a user-defined", "?"};
  std::vector<char> value(info.type == H5L_TYPE_HARD ? 0 : info.u.val_size + 1, '\0');
  const bool read = !value.empty() &&
                    H5Lget_val(loc, path.c_str(), value.data(), info.u.val_size, H5P_DEFAULT) >= 0;
  if (info.type == H5L_TYPE_SOFT) {
    link.kind = "a soft";
    if (read) link.target = value.data();
  } else if (info.type == H5L_TYPE_EXTERNAL) {
    link.kind = "an external";
    const char* file = nullptr;
    const char* object = nullptr;
    if (read && H5Lunpack_elink_val(value.data(), info.u.val_size, nullptr, &file, &object) >= 0) {
      link.target = std::string(file != nullptr ? file : "?") + ":" + (object != nullptr ? object : "?");
    }
  }
  H5Eclear2(H5E_DEFAULT);
  return link;
}

// The HDF5 id type of the object at `name` below `loc`; H5I_BADID when there is none. Each link
// on the path is checked first: H5Lexists fails (rather than answering false) when an
// intermediate group is missing, and only hard links are followed. A soft or external link
// (which could lead anywhere, another file included) is reported in `foreign` instead.
H5I_type_t object_type(hid_t loc, const std::string& name, ForeignLink* foreign) {
  std::string prefix;
  for (const std::string& c : components(name)) {
    prefix += (prefix.empty() ? "" : "/") + c;
    H5L_info_t info;
    if (H5Lexists(loc, prefix.c_str(), H5P_DEFAULT) <= 0 ||
        H5Lget_info(loc, prefix.c_str(), &info, H5P_DEFAULT) < 0) {
      H5Eclear2(H5E_DEFAULT);
      return H5I_BADID;
    }
    if (info.type != H5L_TYPE_HARD) {
      *foreign = describe_link(loc, prefix, info);
      return H5I_BADID;
    }
  }
  if (prefix.empty()) return H5I_BADID;
  const hid_t obj = H5Oopen(loc, prefix.c_str(), H5P_DEFAULT);
  if (obj < 0) {
    H5Eclear2(H5E_DEFAULT);
    return H5I_BADID;
  }
  const H5I_type_t type = H5Iget_type(obj);
  H5Oclose(obj);
  return type;
}

// Memory and file types of a tensor dtype as stored (see write_dataset for the widening).
DType stored_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
    case DType::kBFloat16: return DType::kFloat32;
    case DType::kBool: return DType::kUInt8;
    default: return dtype;
  }
}

hid_t memory_type(DType stored) {
  switch (stored) {
    case DType::kFloat32: return H5T_NATIVE_FLOAT;
    case DType::kFloat64: return H5T_NATIVE_DOUBLE;
    case DType::kInt32: return H5T_NATIVE_INT32;
    case DType::kInt64: return H5T_NATIVE_INT64;
    case DType::kUInt8: return H5T_NATIVE_UINT8;
    default: break;
  }
  throw InternalError(std::string("hdf5: no memory type for ") + dtype_name(stored));
}

hid_t file_type(DType stored) {
  switch (stored) {
    case DType::kFloat32: return H5T_IEEE_F32LE;
    case DType::kFloat64: return H5T_IEEE_F64LE;
    case DType::kInt32: return H5T_STD_I32LE;
    case DType::kInt64: return H5T_STD_I64LE;
    case DType::kUInt8: return H5T_STD_U8LE;
    default: break;
  }
  throw InternalError(std::string("hdf5: no file type for ") + dtype_name(stored));
}

Shape shape_of_space(hid_t space) {
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank <= 0) return Shape{};
  std::vector<hsize_t> dims(size_t(rank), 0);
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  std::vector<int64_t> out(dims.begin(), dims.end());
  return Shape(out);
}

// A link-creation property list that creates missing groups on the way, as h5py does.
Handle intermediate_groups() {
  Handle lcpl = own(H5Pcreate(H5P_LINK_CREATE), close_plist);
  if (lcpl.valid()) H5Pset_create_intermediate_group(id_of(lcpl), 1);
  return lcpl;
}

// A variable-length C string type of `cset`.
Handle vlen_string_type(H5T_cset_t cset) {
  Handle type = own(H5Tcopy(H5T_C_S1), close_type);
  if (type.valid()) {
    H5Tset_size(id_of(type), H5T_VARIABLE);
    H5Tset_cset(id_of(type), cset);
  }
  return type;
}

// A fixed-length, NUL-padded C string type (numpy's 'S<size>') of `cset`.
Handle fixed_string_type(size_t size, H5T_cset_t cset) {
  Handle type = own(H5Tcopy(H5T_C_S1), close_type);
  if (type.valid() && (H5Tset_size(id_of(type), size) < 0 ||
                       H5Tset_strpad(id_of(type), H5T_STR_NULLPAD) < 0 ||
                       H5Tset_cset(id_of(type), cset) < 0)) {
    return Handle();
  }
  return type;
}

// Removes the padding of one fixed-length string as h5py/numpy do.
std::string unpad(const char* data, size_t size, H5T_str_t pad) {
  std::string s(data, size);
  if (pad == H5T_STR_NULLTERM) {
    const size_t nul = s.find('\0');
    if (nul != std::string::npos) s.resize(nul);
  } else {
    const char filler = pad == H5T_STR_SPACEPAD ? ' ' : '\0';
    while (!s.empty() && s.back() == filler) s.pop_back();
  }
  return s;
}

}  // namespace

std::unique_lock<std::recursive_mutex> lock_library() {
  std::unique_lock<std::recursive_mutex> lock(library_mutex());
  // HDF5 would print its error stack to stderr on every failure; errors are reported as strata
  // errors instead. The setting is per thread in thread-safe builds, so it is applied here.
  thread_local bool silenced = false;
  if (!silenced) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    silenced = true;
  }
  return lock;
}

// ---- Handle ----

struct Handle::State {
  State(int64_t i, void (*c)(int64_t)) : id(i), close(c) {}
  State(const State&) = delete;  // exactly one State closes each id
  State& operator=(const State&) = delete;
  int64_t id;
  void (*close)(int64_t);
  bool owned = true;
  ~State() {
    if (!owned) return;
    auto lock = lock_library();
    close(id);
    H5Eclear2(H5E_DEFAULT);
  }
};

Handle::Handle(int64_t id, void (*close)(int64_t))
    : state_(std::make_shared<State>(id, close)) {}

int64_t Handle::id() const {
  if (!state_) throw InternalError("hdf5: use of an invalid handle");
  return state_->id;
}

void Handle::release() {
  if (state_) state_->owned = false;
}

// ---- Group ----

Group::Group(Handle handle, std::shared_ptr<const FileContext> file, std::string path)
    : handle_(std::move(handle)), file_(std::move(file)), path_(std::move(path)) {}

std::string Group::where(const std::string& name) const {
  std::string p = path_;
  if (!name.empty()) p += (p.back() == '/' ? "" : "/") + name;
  return "'" + p + "' in '" + file_->path + "'";
}

int Group::type_of(const std::string& name) const {
  ForeignLink link;
  const H5I_type_t type = object_type(id_of(handle_), name, &link);
  if (!link.path.empty()) {
    throw ValueError("Loading: " + where(link.path) + " is " + link.kind + " link (to '" +
                     link.target + "'), not a group or dataset of the file: Strata does not "
                     "follow links in model and weights files, which could lead into another "
                     "file. Store the data itself there (h5py: copy it instead of linking)");
  }
  return type;
}

int Group::write_error() const {
  return file_->save_status != nullptr ? file_->save_status->error : 0;
}

void Group::check_claimed_size(const char* kind, const std::string& name, size_t count,
                               size_t item_size) const {
  const uint64_t limit = file_->size;
  if (limit == 0) return;
  if (item_size == 0 || count > limit / item_size) {
    throw ValueError("Loading: " + std::string(kind) + " " + where(name) + " claims " +
                     std::to_string(count) + " items of " + std::to_string(item_size) +
                     " bytes, more than the whole file (" + std::to_string(limit) +
                     " bytes) holds: the file is damaged, not a valid HDF5/Keras file");
  }
}

void Group::check_written(const std::string& what, const std::string& name) const {
  if (write_error() != 0) fail(what, name);
}

void Group::fail(const std::string& what, const std::string& name) const {
  const std::string detail = hdf5_detail();
  if (file_->writable) {
    const int err = write_error();
    throw IOError("Saving: cannot " + what + " " + where(name) +
                  (err != 0 ? std::string(": ") + std::strerror(err) : detail) +
                  "; check that the disk has space and the directory is writable");
  }
  throw ValueError("Loading: cannot " + what + " " + where(name) + detail +
                   ": not a valid HDF5/Keras file (truncated, corrupt, or not written by "
                   "save_weights()/save()/Keras)");
}

bool Group::has_group(const std::string& name) const {
  auto lock = lock_library();
  return type_of(name) == H5I_GROUP;
}

bool Group::has_dataset(const std::string& name) const {
  auto lock = lock_library();
  return type_of(name) == H5I_DATASET;
}

Group Group::open_group(const std::string& name) const {
  auto lock = lock_library();
  if (type_of(name) != H5I_GROUP) fail("find the group", name);
  Handle g = own(H5Gopen2(id_of(handle_), name.c_str(), H5P_DEFAULT), close_group);
  if (!g.valid()) fail("open the group", name);
  return Group(std::move(g), file_, path_ + (path_.back() == '/' ? "" : "/") + name);
}

Group Group::create_group(const std::string& name) {
  auto lock = lock_library();
  if (type_of(name) != H5I_BADID) fail("create (it exists already)", name);
  Handle lcpl = intermediate_groups();
  Handle g = own(H5Gcreate2(id_of(handle_), name.c_str(), id_of(lcpl), H5P_DEFAULT, H5P_DEFAULT),
                 close_group);
  if (!g.valid()) fail("create the group", name);
  return Group(std::move(g), file_, path_ + (path_.back() == '/' ? "" : "/") + name);
}

namespace {
herr_t collect_link(hid_t, const char* name, const H5L_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}
herr_t collect_attribute(hid_t, const char* name, const H5A_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}
}  // namespace

std::vector<std::string> Group::child_names() const {
  auto lock = lock_library();
  std::vector<std::string> names;
  if (H5Literate(id_of(handle_), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_link, &names) < 0) {
    fail("list the members of", "");
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool Group::has_attribute(const std::string& name) const {
  auto lock = lock_library();
  const htri_t exists = H5Aexists(id_of(handle_), name.c_str());
  if (exists < 0) fail("look up the attribute", name);
  return exists > 0;
}

std::vector<std::string> Group::attribute_names() const {
  auto lock = lock_library();
  std::vector<std::string> names;
  if (H5Aiterate2(id_of(handle_), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_attribute, &names) <
      0) {
    fail("list the attributes of", "");
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> Group::read_string_list(const std::string& name) const {
  auto lock = lock_library();
  Handle attr = own(H5Aopen(id_of(handle_), name.c_str(), H5P_DEFAULT), close_attribute);
  if (!attr.valid()) fail("open the attribute", name);
  Handle type = own(H5Aget_type(id_of(attr)), close_type);
  Handle space = own(H5Aget_space(id_of(attr)), close_space);
  if (!type.valid() || !space.valid()) fail("read the type of the attribute", name);
  if (H5Sget_simple_extent_type(id_of(space)) == H5S_NULL) return {};  // h5py.Empty
  const hssize_t count = H5Sget_simple_extent_npoints(id_of(space));
  if (count < 0) fail("read the size of the attribute", name);
  const size_t n = size_t(count);
  const H5T_class_t cls = H5Tget_class(id_of(type));
  if (cls != H5T_STRING) {
    // h5py stores an empty Python list as np.asarray([]): float64 of shape (0,).
    if (n == 0 && (cls == H5T_FLOAT || cls == H5T_INTEGER)) return {};
    throw ValueError("Loading: attribute " + where(name) +
                     " should hold strings but holds numbers: not a valid Keras file");
  }
  std::vector<std::string> out;
  if (n == 0) return out;
  const htri_t variable = H5Tis_variable_str(id_of(type));
  if (variable < 0) fail("read the type of the attribute", name);
  // A variable-length item takes at least 16 bytes in the file (length, heap address, index).
  const size_t item_size = variable > 0 ? 16 : H5Tget_size(id_of(type));
  if (item_size == 0) fail("read the string size of the attribute", name);
  check_claimed_size("attribute", name, n, item_size);
  out.reserve(n);
  if (variable > 0) {
    if (file_->writable) fail("read the variable-length strings of", name);  // never written
    if (file_->in_memory && file_->image == nullptr) {
      const hid_t file = H5Iget_file_id(id_of(handle_));
      const ssize_t size = file < 0 ? -1 : H5Fget_file_image(file, nullptr, 0);
      auto image = std::make_shared<std::string>(size > 0 ? size_t(size) : 0, '\0');
      const bool copied = size > 0 && H5Fget_file_image(file, image->data(), image->size()) == size;
      if (file >= 0) H5Fclose(file);
      if (!copied) fail("read the file image holding", name);
      file_->image = std::move(image);
    }
    const FileBytes bytes{file_->path, file_->image, file_->base_address};
    return read_variable_length_strings(id_of(attr), n, bytes, where(name));
  }
  const size_t size = item_size;
  Handle mem = own(H5Tcopy(id_of(type)), close_type);
  std::vector<char> buffer(n * size, '\0');
  if (!mem.valid() || H5Aread(id_of(attr), id_of(mem), buffer.data()) < 0) {
    fail("read the attribute", name);
  }
  const H5T_str_t pad = H5Tget_strpad(id_of(type));
  for (size_t i = 0; i < n; ++i) out.push_back(unpad(buffer.data() + i * size, size, pad));
  return out;
}

std::string Group::read_string(const std::string& name) const {
  std::vector<std::string> values = read_string_list(name);
  if (values.size() != 1) {
    throw ValueError("Loading: attribute " + where(name) + " should hold one string, holds " +
                     std::to_string(values.size()) + ": not a valid Keras file");
  }
  return values[0];
}

void Group::write_string(const std::string& name, const std::string& value) {
  auto lock = lock_library();
  Handle type = fixed_string_type(std::max<size_t>(value.size(), 1),
                                  is_ascii(value) ? H5T_CSET_ASCII : H5T_CSET_UTF8);
  Handle space = own(H5Screate(H5S_SCALAR), close_space);
  if (!type.valid() || !space.valid()) fail("create the attribute", name);
  Handle attr = own(H5Acreate2(id_of(handle_), name.c_str(), id_of(type), id_of(space),
                               H5P_DEFAULT, H5P_DEFAULT),
                    close_attribute);
  std::string data = value;
  data.resize(std::max<size_t>(value.size(), 1), '\0');
  if (!attr.valid() || H5Awrite(id_of(attr), id_of(type), data.data()) < 0) {
    fail("write the attribute", name);
  }
  check_written("write the attribute", name);
}

void Group::write_string_list(const std::string& name, const std::vector<std::string>& values,
                              StringStorage storage, size_t itemsize) {
  if (values.empty()) throw InternalError("hdf5: write_string_list of an empty list");
  auto lock = lock_library();
  const hsize_t dims[1] = {hsize_t(values.size())};
  Handle space = own(H5Screate_simple(1, dims, nullptr), close_space);
  Handle type;
  std::vector<const char*> pointers;
  std::vector<char> fixed;
  const void* data = nullptr;
  if (storage == StringStorage::kVariableLength) {
    type = vlen_string_type(charset_for(values));
    for (const std::string& v : values) pointers.push_back(v.c_str());
    data = pointers.data();
  } else {
    // numpy's 'S' dtype: every item as long as the longest (at least 1), NUL-padded.
    size_t size = std::max<size_t>(itemsize, 1);
    for (const std::string& v : values) size = std::max(size, v.size());
    type = fixed_string_type(size, charset_for(values));
    fixed.assign(values.size() * size, '\0');
    for (size_t i = 0; i < values.size(); ++i) {
      std::copy(values[i].begin(), values[i].end(), fixed.begin() + std::ptrdiff_t(i * size));
    }
    data = fixed.data();
  }
  if (!type.valid() || !space.valid()) fail("create the attribute", name);
  Handle attr = own(H5Acreate2(id_of(handle_), name.c_str(), id_of(type), id_of(space),
                               H5P_DEFAULT, H5P_DEFAULT),
                    close_attribute);
  if (!attr.valid() || H5Awrite(id_of(attr), id_of(type), data) < 0) {
    fail("write the attribute", name);
  }
  check_written("write the attribute", name);
}

void Group::write_empty_list(const std::string& name) {
  auto lock = lock_library();
  const hsize_t dims[1] = {0};
  Handle space = own(H5Screate_simple(1, dims, nullptr), close_space);
  if (!space.valid()) fail("create the attribute", name);
  Handle attr = own(H5Acreate2(id_of(handle_), name.c_str(), H5T_IEEE_F64LE, id_of(space),
                               H5P_DEFAULT, H5P_DEFAULT),
                    close_attribute);
  if (!attr.valid()) fail("create the attribute", name);
}

void Group::write_dataset(const std::string& name, const Tensor& value) {
  const DType stored = stored_dtype(value.dtype());
  Tensor host = value.to(Device::cpu());
  if (host.dtype() != stored) host = host.cast(stored);
  auto lock = lock_library();
  Handle space;
  if (host.rank() == 0) {
    space = own(H5Screate(H5S_SCALAR), close_space);
  } else {
    std::vector<hsize_t> dims(host.shape().begin(), host.shape().end());
    space = own(H5Screate_simple(host.rank(), dims.data(), nullptr), close_space);
  }
  if (!space.valid()) fail("create the dataspace of dataset", name);
  if (type_of(name) != H5I_BADID) {
    fail("create the dataset (the name is used twice; weight names must be unique)", name);
  }
  Handle lcpl = intermediate_groups();
  Handle ds = own(H5Dcreate2(id_of(handle_), name.c_str(), file_type(stored), id_of(space),
                             id_of(lcpl), H5P_DEFAULT, H5P_DEFAULT),
                  close_dataset);
  if (!ds.valid()) fail("create the dataset", name);
  if (host.numel() > 0 &&
      H5Dwrite(id_of(ds), memory_type(stored), H5S_ALL, H5S_ALL, H5P_DEFAULT, host.raw_data()) <
          0) {
    fail("write the dataset", name);
  }
  check_written("write the dataset", name);
}

Shape Group::dataset_shape(const std::string& name) const {
  auto lock = lock_library();
  if (type_of(name) != H5I_DATASET) fail("find the dataset", name);
  Handle ds = own(H5Dopen2(id_of(handle_), name.c_str(), H5P_DEFAULT), close_dataset);
  if (!ds.valid()) fail("open the dataset", name);
  Handle space = own(H5Dget_space(id_of(ds)), close_space);
  if (!space.valid()) fail("read the shape of the dataset", name);
  return shape_of_space(id_of(space));
}

Tensor Group::read_dataset(const std::string& name, DType dtype) const {
  auto lock = lock_library();
  if (type_of(name) != H5I_DATASET) fail("find the dataset", name);
  Handle ds = own(H5Dopen2(id_of(handle_), name.c_str(), H5P_DEFAULT), close_dataset);
  if (!ds.valid()) fail("open the dataset", name);
  Handle type = own(H5Dget_type(id_of(ds)), close_type);
  Handle space = own(H5Dget_space(id_of(ds)), close_space);
  if (!type.valid() || !space.valid()) fail("read the type of the dataset", name);
  const H5T_class_t cls = H5Tget_class(id_of(type));
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) {
    throw ValueError("Loading: dataset " + where(name) +
                     " does not hold numbers: not a valid Keras weights file");
  }
  if (H5Sget_simple_extent_type(id_of(space)) == H5S_NULL) {
    throw ValueError("Loading: dataset " + where(name) + " is empty (no dataspace)");
  }
  const hssize_t count = H5Sget_simple_extent_npoints(id_of(space));
  if (count < 0) fail("read the shape of the dataset", name);
  const size_t item_size = H5Tget_size(id_of(type));
  check_claimed_size("dataset", name, size_t(count), item_size);
  // Contiguous data (what Keras and Strata write) is stored as one block of exactly that size;
  // another size means the shape or the layout was damaged.
  Handle dcpl = own(H5Dget_create_plist(id_of(ds)), close_plist);
  if (dcpl.valid() && H5Pget_layout(id_of(dcpl)) == H5D_CONTIGUOUS && count > 0 &&
      H5Dget_storage_size(id_of(ds)) != hsize_t(count) * item_size) {
    throw ValueError("Loading: dataset " + where(name) + " has shape " +
                     shape_of_space(id_of(space)).to_string() + " of " +
                     std::to_string(item_size) + "-byte items, but stores " +
                     std::to_string(H5Dget_storage_size(id_of(ds))) +
                     " bytes: the file is damaged, not a valid HDF5/Keras file");
  }
  const DType stored = stored_dtype(dtype);
  Tensor out = Tensor::empty(shape_of_space(id_of(space)), stored);
  if (out.numel() > 0 && H5Dread(id_of(ds), memory_type(stored), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                 out.raw_data()) < 0) {
    fail("read the dataset", name);
  }
  return stored == dtype ? out : out.cast(dtype);
}

// ---- File ----

namespace {

// Where the file's HDF5 addresses start: after its user block.
uint64_t user_block_size(hid_t file) {
  Handle fcpl = own(H5Fget_create_plist(file), close_plist);
  hsize_t size = 0;
  if (fcpl.valid()) H5Pget_userblock(id_of(fcpl), &size);
  return uint64_t(size);
}

std::shared_ptr<FileContext> make_context(const std::string& path, bool writable) {
  auto context = std::make_shared<FileContext>();
  context->path = path;
  context->writable = writable;
  return context;
}

}  // namespace

File::File(Handle handle, std::shared_ptr<FileContext> context)
    : context_(std::move(context)), handle_(std::move(handle)) {}

namespace {

// What every file Strata creates shares. STRONG: closing the file closes anything still open in
// it, so close() really releases the file before it is fsync'ed and renamed. HDF5's 1.8 format
// (readable by every HDF5 since 2008, h5py and Keras included) rather than the original one:
// its metadata carries checksums HDF5 verifies, and an attribute of any size fits (a large
// model_config goes to dense attribute storage; the original format limits it to 64 KB).
bool set_creation_access(hid_t fapl) {
  return H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) >= 0 &&
         H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18) >= 0;
}

}  // namespace

File File::create(const std::string& path) {
  auto lock = lock_library();
  auto context = make_context(path, true);
  context->save_status = std::make_shared<SaveStatus>();
  Handle fapl = own(H5Pcreate(H5P_FILE_ACCESS), close_plist);
  Handle fcpl = own(H5Pcreate(H5P_FILE_CREATE), close_plist);
  // The user block holds the checksum that close() writes.
  const bool configured = fapl.valid() && fcpl.valid() && set_creation_access(id_of(fapl)) &&
                          H5Pset_userblock(id_of(fcpl), kChecksumHeaderSize) >= 0;
  if (configured) use_save_driver(id_of(fapl), context->save_status.get());
  Handle f = configured ? own(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, id_of(fcpl), id_of(fapl)),
                              close_file)
                        : Handle();
  if (!f.valid()) {
    throw IOError("Saving: cannot create the HDF5 file '" + path + "'" + hdf5_detail() +
                  "; check that its directory exists and is writable");
  }
  return File(std::move(f), std::move(context));
}

File File::open(const std::string& path) {
  // The OS error first: a missing or unreadable file is an IOError, not a format problem.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    throw IOError("Loading: cannot open '" + path + "': " + std::strerror(err) +
                  (err == ENOENT ? " (check the path; save the model there first)" : ""));
  }
  if (S_ISDIR(st.st_mode)) {
    throw IOError("Loading: '" + path + "' is a directory, expected an HDF5 (.h5) file");
  }
  // Before HDF5 reads a byte: libhdf5 is not robust against damaged metadata.
  verify_checksum(path);
  auto lock = lock_library();
  Handle f = own(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), close_file);
  if (!f.valid()) {
    const std::string detail = hdf5_detail();
    if (::access(path.c_str(), R_OK) != 0) {
      throw IOError("Loading: cannot read '" + path + "': " + std::strerror(errno));
    }
    throw ValueError("Loading: '" + path + "' is not a valid HDF5/Keras file" + detail +
                     ": it is truncated, corrupt, or in another format; load a file written by "
                     "save_weights()/save() or by Keras");
  }
  auto context = make_context(path, false);
  context->size = uint64_t(st.st_size);
  context->base_address = user_block_size(id_of(f));
  return File(std::move(f), std::move(context));
}

namespace {

// The core driver keeps the whole file in memory; without a backing store nothing touches the
// disk, so `name` only labels the file (and messages).
// Files in memory keep HDF5's original format: their image is taken while the file is open
// (image()), and such an image of a 1.8-format file fails HDF5's metadata checksums when read
// back. The zip archive they travel in has its own CRC.
Handle core_access_list() {
  Handle fapl = own(H5Pcreate(H5P_FILE_ACCESS), close_plist);
  if (!fapl.valid() || H5Pset_fapl_core(id_of(fapl), 1 << 20, /*backing_store=*/0) < 0) {
    return Handle();
  }
  H5Pset_fclose_degree(id_of(fapl), H5F_CLOSE_STRONG);
  return fapl;
}

// The name HDF5 gets for an in-memory file: unique in the process and never a real path (a file
// of the displayed name may exist on disk, and HDF5 refuses to open one name twice).
std::string memory_file_name() {
  static std::atomic<uint64_t> counter{0};
  return "strata-in-memory-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter.fetch_add(1)) + ".h5";
}

}  // namespace

File File::create_in_memory(const std::string& name) {
  auto lock = lock_library();
  Handle fapl = core_access_list();
  Handle f = fapl.valid() ? own(H5Fcreate(memory_file_name().c_str(), H5F_ACC_TRUNC,
                                          H5P_DEFAULT, id_of(fapl)),
                                close_file)
                          : Handle();
  if (!f.valid()) {
    throw IOError("Saving: cannot create the in-memory HDF5 file for '" + name + "'" +
                  hdf5_detail());
  }
  return File(std::move(f), make_context(name, true));
}

File File::open_image(const std::string& bytes, const std::string& name) {
  auto lock = lock_library();
  Handle fapl = core_access_list();
  if (!fapl.valid() ||
      H5Pset_file_image(id_of(fapl), const_cast<char*>(bytes.data()), bytes.size()) < 0) {
    throw ValueError("Loading: cannot read '" + name + "' as an HDF5 file" + hdf5_detail());
  }
  Handle f = own(H5Fopen(memory_file_name().c_str(), H5F_ACC_RDONLY, id_of(fapl)), close_file);
  if (!f.valid()) {
    throw ValueError("Loading: '" + name + "' is not a valid HDF5 file" + hdf5_detail() +
                     ": it is truncated or corrupt; save the model again");
  }
  auto context = make_context(name, false);
  context->size = bytes.size();
  context->in_memory = true;
  context->base_address = user_block_size(id_of(f));
  return File(std::move(f), std::move(context));
}

std::string File::image() const {
  auto lock = lock_library();
  const hid_t id = id_of(handle_);
  if (H5Fflush(id, H5F_SCOPE_LOCAL) < 0) {
    throw IOError("Saving: cannot flush '" + path() + "'" + hdf5_detail());
  }
  const ssize_t size = H5Fget_file_image(id, nullptr, 0);
  std::string bytes(size > 0 ? size_t(size) : 0, '\0');
  if (size <= 0 || H5Fget_file_image(id, bytes.data(), bytes.size()) != size) {
    throw IOError("Saving: cannot take the image of '" + path() + "'" + hdf5_detail());
  }
  return bytes;
}

Group File::root() const {
  auto lock = lock_library();
  Handle g = own(H5Gopen2(id_of(handle_), "/", H5P_DEFAULT), close_group);
  if (!g.valid()) {
    const std::string detail = hdf5_detail();
    if (context_->writable) throw IOError("Saving: cannot open the root group of '" + path() + "'" + detail);
    throw ValueError("Loading: '" + path() + "' is not a valid HDF5/Keras file" + detail);
  }
  return Group(std::move(g), context_, "/");
}

void File::close() {
  if (!handle_.valid()) return;
  auto lock = lock_library();
  const hid_t id = id_of(handle_);
  handle_.release();
  const bool flushed = !context_->writable || H5Fflush(id, H5F_SCOPE_LOCAL) >= 0;
  // Closing cannot fail on a write error: the save driver kept HDF5 from seeing it.
  const bool closed = H5Fclose(id) >= 0;
  handle_ = Handle();
  const std::string detail = hdf5_detail();
  const int err = context_->save_status != nullptr ? context_->save_status->error : 0;
  if (!flushed || !closed || err != 0) {
    throw IOError("Saving: cannot finish writing '" + path() + "'" +
                  (err != 0 ? std::string(": ") + std::strerror(err) : detail) +
                  "; check that the disk has space and the directory is writable");
  }
  if (context_->save_status != nullptr) write_checksum(path());  // a file on disk
}

}  // namespace strata::saving::hdf5
