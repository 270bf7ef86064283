// The C API used from C++: RAII owners for every handle kind, errors turned
// into exceptions, and the main paths (encode, decode, metadata, files,
// iterators, streaming, validation) checked. Usage: api_cpp SCRATCH_DIR
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "check.h"

namespace {

struct Failed : std::runtime_error {
    tgm_error code;
    Failed(tgm_error c, const char *what) : std::runtime_error(what ? what : "?"), code(c) {}
};

void ok(tgm_error rc) {
    if (rc != TGM_ERROR_OK) throw Failed(rc, tgm_last_error());
}

template <typename T, void (*Free)(T *)>
struct Deleter {
    void operator()(T *p) const { Free(p); }
};
using Message = std::unique_ptr<tgm_message_t, Deleter<tgm_message_t, tgm_message_free>>;
using Metadata = std::unique_ptr<tgm_metadata_t, Deleter<tgm_metadata_t, tgm_metadata_free>>;
using File = std::unique_ptr<tgm_file_t, Deleter<tgm_file_t, tgm_file_close>>;
using FileIter = std::unique_ptr<tgm_file_iter_t, Deleter<tgm_file_iter_t, tgm_file_iter_free>>;
using ObjectIter = std::unique_ptr<tgm_object_iter_t, Deleter<tgm_object_iter_t, tgm_object_iter_free>>;
using Encoder = std::unique_ptr<tgm_streaming_encoder_t,
                                Deleter<tgm_streaming_encoder_t, tgm_streaming_encoder_free>>;

struct Bytes {
    tgm_bytes_t b{nullptr, 0};
    Bytes() = default;
    Bytes(const Bytes &) = delete;
    Bytes &operator=(const Bytes &) = delete;
    Bytes(Bytes &&o) noexcept : b(o.b) { o.b = tgm_bytes_t{nullptr, 0}; }
    ~Bytes() { tgm_bytes_free(b); }
    std::string text() const { return std::string(reinterpret_cast<const char *>(b.data), b.len); }
};

const std::string kMeta =
    R"({"descriptors":[{"type":"ntensor","ndim":1,"shape":[5],"strides":[1],)"
    R"("dtype":"float64","encoding":"none","filter":"shuffle","compression":"zstd",)"
    R"("shuffle_element_size":8,"zstd_level":3}],)"
    R"("base":[{"mars":{"param":"msl","levtype":"sfc"},"units":"Pa"}],"run":"cpp"})";

const std::vector<double> kValues = {101325.0, 100900.5, 99800.25, 102000.0, 98765.125};

Bytes encode() {
    const uint8_t *ptrs[1] = {reinterpret_cast<const uint8_t *>(kValues.data())};
    const size_t lens[1] = {kValues.size() * sizeof(double)};
    Bytes out;
    ok(tgm_encode(kMeta.c_str(), ptrs, lens, 1, "xxh3", 0, &out.b));
    return out;
}

void test_decode() {
    Bytes enc = encode();
    tgm_message_t *raw = nullptr;
    ok(tgm_decode(enc.b.data, enc.b.len, 1, 0, 1, &raw));
    Message msg(raw);
    CHECK(tgm_message_num_objects(msg.get()) == 1);
    CHECK_STR(tgm_object_filter(msg.get(), 0), "shuffle");
    size_t len = 0;
    auto data = reinterpret_cast<const double *>(tgm_object_data(msg.get(), 0, &len));
    CHECK(len == kValues.size() * sizeof(double));
    CHECK(data && std::memcmp(data, kValues.data(), len) == 0);
    tgm_metadata_t *m = nullptr;
    ok(tgm_message_metadata(msg.get(), &m));
    Metadata meta(m);
    CHECK_STR(tgm_metadata_get_string(meta.get(), "mars.param"), "msl");
    CHECK_STR(tgm_metadata_get_string(meta.get(), "run"), "cpp");
    const tgm_value_t *mars = tgm_metadata_get(meta.get(), "mars");
    std::vector<std::string> keys;
    for (size_t i = 0; i < tgm_value_map_len(mars); i++) {
        size_t n = 0;
        const char *k = tgm_value_map_key_at(mars, i, &n);
        keys.emplace_back(k, n);
    }
    CHECK(keys.size() == 2 && keys[0] == "param" && keys[1] == "levtype");

    bool threw = false;
    try {
        tgm_message_t *bad = nullptr;
        ok(tgm_decode(enc.b.data, 16, 1, 0, 0, &bad));
    } catch (const Failed &e) {
        threw = e.code == TGM_ERROR_FRAMING && std::string(e.what()).find("tgm_decode") != std::string::npos;
    }
    CHECK(threw);
}

void test_file_and_iterators(const std::string &dir) {
    const std::string path = dir + "/cpp.tgm";
    Bytes enc = encode();
    {
        tgm_file_t *raw = nullptr;
        ok(tgm_file_create(path.c_str(), &raw));
        File f(raw);
        for (int i = 0; i < 3; i++) ok(tgm_file_append_raw(f.get(), enc.b.data, enc.b.len));
    }
    tgm_file_t *raw = nullptr;
    ok(tgm_file_open(path.c_str(), &raw));
    File f(raw);
    size_t count = 0;
    ok(tgm_file_message_count(f.get(), &count));
    CHECK(count == 3);
    tgm_file_iter_t *it_raw = nullptr;
    ok(tgm_file_iter_create(f.get(), &it_raw));
    FileIter it(it_raw);
    int seen = 0;
    for (;;) {
        Bytes m;
        tgm_error rc = tgm_file_iter_next(it.get(), &m.b);
        if (rc == TGM_ERROR_END_OF_ITER) break;
        ok(rc);
        CHECK(m.b.len == enc.b.len && std::memcmp(m.b.data, enc.b.data, m.b.len) == 0);
        tgm_object_iter_t *oi_raw = nullptr;
        ok(tgm_object_iter_create(m.b.data, m.b.len, 1, 1, &oi_raw));
        ObjectIter oi(oi_raw);
        tgm_message_t *one = nullptr;
        ok(tgm_object_iter_next(oi.get(), &one));
        Message owned(one);
        CHECK_STR(tgm_object_dtype(owned.get(), 0), "float64");
        seen++;
    }
    CHECK(seen == 3);
    Bytes report;
    ok(tgm_validate_file(path.c_str(), "default", 0, &report.b));
    CHECK(report.text().find("\"messages\"") != std::string::npos);
}

void test_streaming(const std::string &dir) {
    const std::string path = dir + "/cpp-stream.tgm";
    tgm_streaming_encoder_t *raw = nullptr;
    ok(tgm_streaming_encoder_create(path.c_str(), R"({"run":"cpp-stream"})", "xxh3", 0, &raw));
    Encoder enc(raw);
    const std::string desc =
        R"({"type":"ntensor","ndim":1,"shape":[5],"strides":[1],"dtype":"float64",)"
        R"("encoding":"none","filter":"none","compression":"none"})";
    for (int i = 0; i < 4; i++) {
        ok(tgm_streaming_encoder_write(enc.get(), desc.c_str(),
                                       reinterpret_cast<const uint8_t *>(kValues.data()),
                                       kValues.size() * sizeof(double)));
    }
    CHECK(tgm_streaming_encoder_count(enc.get()) == 4);
    ok(tgm_streaming_encoder_finish(enc.get()));
    enc.reset();
    tgm_file_t *fraw = nullptr;
    ok(tgm_file_open(path.c_str(), &fraw));
    File f(fraw);
    tgm_message_t *m = nullptr;
    ok(tgm_file_decode_message(f.get(), 0, 1, 0, 1, &m));
    Message msg(m);
    CHECK(tgm_message_num_objects(msg.get()) == 4);
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s SCRATCH_DIR\n", argv[0]);
        return 2;
    }
    try {
        test_decode();
        test_file_and_iterators(argv[1]);
        test_streaming(argv[1]);
    } catch (const Failed &e) {
        std::fprintf(stderr, "unexpected failure %d: %s\n", static_cast<int>(e.code), e.what());
        return 1;
    }
    return check_report("api_cpp");
}
