! Fortran 2008 binding (iso_c_binding) over tgm's C API (ffi/include/tensogram.h):
! encoding and decoding real arrays, files and their messages, and metadata.
!
! Conventions of this module:
! - status arguments receive the C API's codes (TGM_OK = 0, ...); when they
!   are not OK, tgm_error_message() gives the reason;
! - object and message numbers are 1-based (the C API's are 0-based);
! - arrays are passed and returned as contiguous rank-1 data; a Fortran
!   array a(ni, nj) is row-major [nj, ni] on the wire, so give the shape in
!   the descriptor JSON reversed and reshape the decoded data back;
! - handles (messages, metadata, files, iterators) are type(c_ptr) and are
!   released with the matching *_close subroutine, which accepts a null one.
module tgm
    use, intrinsic :: iso_c_binding
    implicit none
    private

    integer(c_int), parameter, public :: TGM_OK = 0, TGM_FRAMING = 1, &
        TGM_METADATA = 2, TGM_ENCODING = 3, TGM_COMPRESSION = 4, &
        TGM_OBJECT = 5, TGM_IO = 6, TGM_HASH_MISMATCH = 7, &
        TGM_INVALID_ARG = 8, TGM_END_OF_ITER = 9

    type, bind(c) :: tgm_bytes_t
        type(c_ptr) :: data = c_null_ptr
        integer(c_size_t) :: len = 0
    end type tgm_bytes_t

    public :: tgm_error_message, tgm_encode_real64, tgm_encode_real32, &
        tgm_decode_message, tgm_message_close, tgm_message_objects, &
        tgm_object_shape, tgm_object_dtype, tgm_object_real64, &
        tgm_object_real32, tgm_message_metadata, tgm_metadata_close, &
        tgm_meta_string, tgm_meta_int, tgm_meta_real, tgm_file_open, &
        tgm_file_create, tgm_file_close, tgm_file_messages, &
        tgm_file_append_real64, tgm_file_decode, tgm_file_iterate, &
        tgm_file_next, tgm_file_iter_close

    interface
        function c_last_error() bind(c, name="tgm_last_error") result(p)
            import :: c_ptr
            type(c_ptr) :: p
        end function c_last_error

        function c_strlen(s) bind(c, name="strlen") result(n)
            import :: c_ptr, c_size_t
            type(c_ptr), value :: s
            integer(c_size_t) :: n
        end function c_strlen

        subroutine c_bytes_free(b) bind(c, name="tgm_bytes_free")
            import :: tgm_bytes_t
            type(tgm_bytes_t), value :: b
        end subroutine c_bytes_free

        function c_encode(meta, ptrs, lens, n, hash, threads, out) &
                bind(c, name="tgm_encode") result(rc)
            import :: c_char, c_ptr, c_size_t, c_int32_t, c_int, tgm_bytes_t
            character(kind=c_char), dimension(*), intent(in) :: meta
            type(c_ptr), dimension(*), intent(in) :: ptrs
            integer(c_size_t), dimension(*), intent(in) :: lens
            integer(c_size_t), value :: n
            type(c_ptr), value :: hash
            integer(c_int32_t), value :: threads
            type(tgm_bytes_t), intent(out) :: out
            integer(c_int) :: rc
        end function c_encode

        function c_decode(buf, len, native, threads, verify, out) &
                bind(c, name="tgm_decode") result(rc)
            import :: c_ptr, c_size_t, c_int32_t, c_int
            type(c_ptr), value :: buf
            integer(c_size_t), value :: len
            integer(c_int32_t), value :: native, threads, verify
            type(c_ptr), intent(out) :: out
            integer(c_int) :: rc
        end function c_decode

        subroutine c_message_free(msg) bind(c, name="tgm_message_free")
            import :: c_ptr
            type(c_ptr), value :: msg
        end subroutine c_message_free

        function c_num_objects(msg) bind(c, name="tgm_message_num_objects") result(n)
            import :: c_ptr, c_size_t
            type(c_ptr), value :: msg
            integer(c_size_t) :: n
        end function c_num_objects

        function c_object_ndim(msg, i) bind(c, name="tgm_object_ndim") result(n)
            import :: c_ptr, c_size_t, c_int64_t
            type(c_ptr), value :: msg
            integer(c_size_t), value :: i
            integer(c_int64_t) :: n
        end function c_object_ndim

        function c_object_shape(msg, i) bind(c, name="tgm_object_shape") result(p)
            import :: c_ptr, c_size_t
            type(c_ptr), value :: msg
            integer(c_size_t), value :: i
            type(c_ptr) :: p
        end function c_object_shape

        function c_object_dtype(msg, i) bind(c, name="tgm_object_dtype") result(p)
            import :: c_ptr, c_size_t
            type(c_ptr), value :: msg
            integer(c_size_t), value :: i
            type(c_ptr) :: p
        end function c_object_dtype

        function c_object_data(msg, i, len) bind(c, name="tgm_object_data") result(p)
            import :: c_ptr, c_size_t
            type(c_ptr), value :: msg
            integer(c_size_t), value :: i
            integer(c_size_t), intent(out) :: len
            type(c_ptr) :: p
        end function c_object_data

        function c_message_metadata(msg, out) bind(c, name="tgm_message_metadata") result(rc)
            import :: c_ptr, c_int
            type(c_ptr), value :: msg
            type(c_ptr), intent(out) :: out
            integer(c_int) :: rc
        end function c_message_metadata

        subroutine c_metadata_free(meta) bind(c, name="tgm_metadata_free")
            import :: c_ptr
            type(c_ptr), value :: meta
        end subroutine c_metadata_free

        function c_get_string(meta, key) bind(c, name="tgm_metadata_get_string") result(p)
            import :: c_ptr, c_char
            type(c_ptr), value :: meta
            character(kind=c_char), dimension(*), intent(in) :: key
            type(c_ptr) :: p
        end function c_get_string

        function c_get_string_at(meta, i, key) bind(c, name="tgm_metadata_get_string_at") result(p)
            import :: c_ptr, c_char, c_size_t
            type(c_ptr), value :: meta
            integer(c_size_t), value :: i
            character(kind=c_char), dimension(*), intent(in) :: key
            type(c_ptr) :: p
        end function c_get_string_at

        function c_get_int(meta, key, dflt) bind(c, name="tgm_metadata_get_int") result(v)
            import :: c_ptr, c_char, c_int64_t
            type(c_ptr), value :: meta
            character(kind=c_char), dimension(*), intent(in) :: key
            integer(c_int64_t), value :: dflt
            integer(c_int64_t) :: v
        end function c_get_int

        function c_get_int_at(meta, i, key, dflt) bind(c, name="tgm_metadata_get_int_at") result(v)
            import :: c_ptr, c_char, c_int64_t, c_size_t
            type(c_ptr), value :: meta
            integer(c_size_t), value :: i
            character(kind=c_char), dimension(*), intent(in) :: key
            integer(c_int64_t), value :: dflt
            integer(c_int64_t) :: v
        end function c_get_int_at

        function c_get_float(meta, key, dflt) bind(c, name="tgm_metadata_get_float") result(v)
            import :: c_ptr, c_char, c_double
            type(c_ptr), value :: meta
            character(kind=c_char), dimension(*), intent(in) :: key
            real(c_double), value :: dflt
            real(c_double) :: v
        end function c_get_float

        function c_get_float_at(meta, i, key, dflt) bind(c, name="tgm_metadata_get_float_at") result(v)
            import :: c_ptr, c_char, c_double, c_size_t
            type(c_ptr), value :: meta
            integer(c_size_t), value :: i
            character(kind=c_char), dimension(*), intent(in) :: key
            real(c_double), value :: dflt
            real(c_double) :: v
        end function c_get_float_at

        function c_file_open(path, out) bind(c, name="tgm_file_open") result(rc)
            import :: c_ptr, c_char, c_int
            character(kind=c_char), dimension(*), intent(in) :: path
            type(c_ptr), intent(out) :: out
            integer(c_int) :: rc
        end function c_file_open

        function c_file_create(path, out) bind(c, name="tgm_file_create") result(rc)
            import :: c_ptr, c_char, c_int
            character(kind=c_char), dimension(*), intent(in) :: path
            type(c_ptr), intent(out) :: out
            integer(c_int) :: rc
        end function c_file_create

        subroutine c_file_close(f) bind(c, name="tgm_file_close")
            import :: c_ptr
            type(c_ptr), value :: f
        end subroutine c_file_close

        function c_file_count(f, n) bind(c, name="tgm_file_message_count") result(rc)
            import :: c_ptr, c_size_t, c_int
            type(c_ptr), value :: f
            integer(c_size_t), intent(out) :: n
            integer(c_int) :: rc
        end function c_file_count

        function c_file_append_raw(f, buf, len) bind(c, name="tgm_file_append_raw") result(rc)
            import :: c_ptr, c_size_t, c_int
            type(c_ptr), value :: f, buf
            integer(c_size_t), value :: len
            integer(c_int) :: rc
        end function c_file_append_raw

        function c_file_decode(f, i, native, threads, verify, out) &
                bind(c, name="tgm_file_decode_message") result(rc)
            import :: c_ptr, c_size_t, c_int32_t, c_int
            type(c_ptr), value :: f
            integer(c_size_t), value :: i
            integer(c_int32_t), value :: native, threads, verify
            type(c_ptr), intent(out) :: out
            integer(c_int) :: rc
        end function c_file_decode

        function c_file_iter_create(f, out) bind(c, name="tgm_file_iter_create") result(rc)
            import :: c_ptr, c_int
            type(c_ptr), value :: f
            type(c_ptr), intent(out) :: out
            integer(c_int) :: rc
        end function c_file_iter_create

        function c_file_iter_next(it, out) bind(c, name="tgm_file_iter_next") result(rc)
            import :: c_ptr, c_int, tgm_bytes_t
            type(c_ptr), value :: it
            type(tgm_bytes_t), intent(out) :: out
            integer(c_int) :: rc
        end function c_file_iter_next

        subroutine c_file_iter_free(it) bind(c, name="tgm_file_iter_free")
            import :: c_ptr
            type(c_ptr), value :: it
        end subroutine c_file_iter_free
    end interface

contains

    ! A NUL-terminated copy of s, for the C API.
    pure function c_str(s) result(c)
        character(len=*), intent(in) :: s
        character(kind=c_char, len=len(s) + 1) :: c
        c = s // c_null_char
    end function c_str

    ! The NUL-terminated C string at p as a Fortran string ("" for NULL).
    function f_str(p) result(s)
        type(c_ptr), intent(in) :: p
        character(len=:), allocatable :: s
        character(kind=c_char), pointer :: chars(:)
        integer :: i, n
        if (.not. c_associated(p)) then
            s = ""
            return
        end if
        n = int(c_strlen(p))
        call c_f_pointer(p, chars, [n])
        allocate (character(len=n) :: s)
        do i = 1, n
            s(i:i) = chars(i)
        end do
    end function f_str

    ! Why the last call on this thread failed.
    function tgm_error_message() result(s)
        character(len=:), allocatable :: s
        s = f_str(c_last_error())
    end function tgm_error_message

    ! The hash argument: "xxh3" or "" (no digests).
    function hash_arg(hash, keep) result(p)
        character(len=*), intent(in) :: hash
        character(kind=c_char, len=:), allocatable, target, intent(inout) :: keep
        type(c_ptr) :: p
        p = c_null_ptr
        if (len(hash) > 0) then
            keep = c_str(hash)
            p = c_loc(keep)
        end if
    end function hash_arg

    ! Encodes one object of len_bytes bytes at data, described by
    ! metadata_json (the C API's: "descriptors", "base", other keys), into wire.
    subroutine encode_one(metadata_json, data, len_bytes, hash, wire, status)
        character(len=*), intent(in) :: metadata_json, hash
        type(c_ptr), intent(in) :: data
        integer(c_size_t), intent(in) :: len_bytes
        integer(c_int8_t), allocatable, intent(out) :: wire(:)
        integer(c_int), intent(out) :: status
        type(tgm_bytes_t) :: out
        type(c_ptr) :: ptrs(1)
        integer(c_size_t) :: lens(1)
        integer(c_int8_t), pointer :: bytes(:)
        character(kind=c_char, len=:), allocatable, target :: keep
        ptrs(1) = data
        lens(1) = len_bytes
        status = c_encode(c_str(metadata_json), ptrs, lens, 1_c_size_t, &
            hash_arg(hash, keep), 0_c_int32_t, out)
        if (status /= TGM_OK) then
            allocate (wire(0))
            return
        end if
        call c_f_pointer(out%data, bytes, [out%len])
        wire = bytes
        call c_bytes_free(out)
    end subroutine encode_one

    ! Encodes values (one float64 object) into wire; hash is "xxh3" or "".
    subroutine tgm_encode_real64(metadata_json, values, hash, wire, status)
        character(len=*), intent(in) :: metadata_json, hash
        real(c_double), intent(in), target, contiguous :: values(:)
        integer(c_int8_t), allocatable, intent(out) :: wire(:)
        integer(c_int), intent(out) :: status
        call encode_one(metadata_json, c_loc(values), 8_c_size_t * size(values, kind=c_size_t), &
            hash, wire, status)
    end subroutine tgm_encode_real64

    ! Encodes values (one float32 object) into wire.
    subroutine tgm_encode_real32(metadata_json, values, hash, wire, status)
        character(len=*), intent(in) :: metadata_json, hash
        real(c_float), intent(in), target, contiguous :: values(:)
        integer(c_int8_t), allocatable, intent(out) :: wire(:)
        integer(c_int), intent(out) :: status
        call encode_one(metadata_json, c_loc(values), 4_c_size_t * size(values, kind=c_size_t), &
            hash, wire, status)
    end subroutine tgm_encode_real32

    ! Decodes the message in wire (digests checked when verify) into msg.
    subroutine tgm_decode_message(wire, verify, msg, status)
        integer(c_int8_t), intent(in), target, contiguous :: wire(:)
        logical, intent(in) :: verify
        type(c_ptr), intent(out) :: msg
        integer(c_int), intent(out) :: status
        status = c_decode(c_loc(wire), size(wire, kind=c_size_t), 1_c_int32_t, 0_c_int32_t, &
            merge(1_c_int32_t, 0_c_int32_t, verify), msg)
    end subroutine tgm_decode_message

    subroutine tgm_message_close(msg)
        type(c_ptr), intent(inout) :: msg
        call c_message_free(msg)
        msg = c_null_ptr
    end subroutine tgm_message_close

    ! The number of objects of a decoded message.
    integer function tgm_message_objects(msg)
        type(c_ptr), intent(in) :: msg
        tgm_message_objects = int(c_num_objects(msg))
    end function tgm_message_objects

    ! Object i's shape as stored (row-major order).
    function tgm_object_shape(msg, i) result(shape)
        type(c_ptr), intent(in) :: msg
        integer, intent(in) :: i
        integer(c_int64_t), allocatable :: shape(:)
        integer(c_int64_t), pointer :: dims(:)
        integer(c_int64_t) :: n
        type(c_ptr) :: p
        n = c_object_ndim(msg, int(i - 1, c_size_t))
        allocate (shape(n))
        p = c_object_shape(msg, int(i - 1, c_size_t))
        if (n > 0 .and. c_associated(p)) then
            call c_f_pointer(p, dims, [n])
            shape = dims
        end if
    end function tgm_object_shape

    ! Object i's dtype name ("float64", ...), "" when there is no such object.
    function tgm_object_dtype(msg, i) result(s)
        type(c_ptr), intent(in) :: msg
        integer, intent(in) :: i
        character(len=:), allocatable :: s
        s = f_str(c_object_dtype(msg, int(i - 1, c_size_t)))
    end function tgm_object_dtype

    ! The element bytes of object i, checked to be n elements of width bytes.
    subroutine object_bytes(msg, i, dtype, width, p, n, status)
        type(c_ptr), intent(in) :: msg
        integer, intent(in) :: i, width
        character(len=*), intent(in) :: dtype
        type(c_ptr), intent(out) :: p
        integer(c_size_t), intent(out) :: n
        integer(c_int), intent(out) :: status
        integer(c_size_t) :: len
        status = TGM_OBJECT
        n = 0
        p = c_null_ptr
        if (tgm_object_dtype(msg, i) /= dtype) return
        p = c_object_data(msg, int(i - 1, c_size_t), len)
        if (.not. c_associated(p)) return
        n = len / int(width, c_size_t)
        status = TGM_OK
    end subroutine object_bytes

    ! Object i's float64 values; TGM_OBJECT when it is not float64.
    subroutine tgm_object_real64(msg, i, values, status)
        type(c_ptr), intent(in) :: msg
        integer, intent(in) :: i
        real(c_double), allocatable, intent(out) :: values(:)
        integer(c_int), intent(out) :: status
        real(c_double), pointer :: v(:)
        type(c_ptr) :: p
        integer(c_size_t) :: n
        call object_bytes(msg, i, "float64", 8, p, n, status)
        allocate (values(n))
        if (status /= TGM_OK .or. n == 0) return
        call c_f_pointer(p, v, [n])
        values = v
    end subroutine tgm_object_real64

    ! Object i's float32 values; TGM_OBJECT when it is not float32.
    subroutine tgm_object_real32(msg, i, values, status)
        type(c_ptr), intent(in) :: msg
        integer, intent(in) :: i
        real(c_float), allocatable, intent(out) :: values(:)
        integer(c_int), intent(out) :: status
        real(c_float), pointer :: v(:)
        type(c_ptr) :: p
        integer(c_size_t) :: n
        call object_bytes(msg, i, "float32", 4, p, n, status)
        allocate (values(n))
        if (status /= TGM_OK .or. n == 0) return
        call c_f_pointer(p, v, [n])
        values = v
    end subroutine tgm_object_real32

    ! The metadata of a decoded message (close it with tgm_metadata_close).
    subroutine tgm_message_metadata(msg, meta, status)
        type(c_ptr), intent(in) :: msg
        type(c_ptr), intent(out) :: meta
        integer(c_int), intent(out) :: status
        status = c_message_metadata(msg, meta)
    end subroutine tgm_message_metadata

    subroutine tgm_metadata_close(meta)
        type(c_ptr), intent(inout) :: meta
        call c_metadata_free(meta)
        meta = c_null_ptr
    end subroutine tgm_metadata_close

    ! The value at dotted key as text ("" when absent): in object obj's
    ! entry when obj is given, else message-level (objects, then _extra_).
    function tgm_meta_string(meta, key, obj) result(s)
        type(c_ptr), intent(in) :: meta
        character(len=*), intent(in) :: key
        integer, intent(in), optional :: obj
        character(len=:), allocatable :: s
        if (present(obj)) then
            s = f_str(c_get_string_at(meta, int(obj - 1, c_size_t), c_str(key)))
        else
            s = f_str(c_get_string(meta, c_str(key)))
        end if
    end function tgm_meta_string

    ! The integer at dotted key, or dflt.
    function tgm_meta_int(meta, key, dflt, obj) result(v)
        type(c_ptr), intent(in) :: meta
        character(len=*), intent(in) :: key
        integer(c_int64_t), intent(in) :: dflt
        integer, intent(in), optional :: obj
        integer(c_int64_t) :: v
        if (present(obj)) then
            v = c_get_int_at(meta, int(obj - 1, c_size_t), c_str(key), dflt)
        else
            v = c_get_int(meta, c_str(key), dflt)
        end if
    end function tgm_meta_int

    ! The number at dotted key (integers widened), or dflt.
    function tgm_meta_real(meta, key, dflt, obj) result(v)
        type(c_ptr), intent(in) :: meta
        character(len=*), intent(in) :: key
        real(c_double), intent(in) :: dflt
        integer, intent(in), optional :: obj
        real(c_double) :: v
        if (present(obj)) then
            v = c_get_float_at(meta, int(obj - 1, c_size_t), c_str(key), dflt)
        else
            v = c_get_float(meta, c_str(key), dflt)
        end if
    end function tgm_meta_real

    subroutine tgm_file_open(path, file, status)
        character(len=*), intent(in) :: path
        type(c_ptr), intent(out) :: file
        integer(c_int), intent(out) :: status
        status = c_file_open(c_str(path), file)
    end subroutine tgm_file_open

    ! Creates path (an existing file is truncated) for appending messages.
    subroutine tgm_file_create(path, file, status)
        character(len=*), intent(in) :: path
        type(c_ptr), intent(out) :: file
        integer(c_int), intent(out) :: status
        status = c_file_create(c_str(path), file)
    end subroutine tgm_file_create

    subroutine tgm_file_close(file)
        type(c_ptr), intent(inout) :: file
        call c_file_close(file)
        file = c_null_ptr
    end subroutine tgm_file_close

    ! The number of complete messages in the file (-1 on failure).
    integer function tgm_file_messages(file)
        type(c_ptr), intent(in) :: file
        integer(c_size_t) :: n
        tgm_file_messages = -1
        if (c_file_count(file, n) == TGM_OK) tgm_file_messages = int(n)
    end function tgm_file_messages

    ! Encodes values as one float64 object and appends the message.
    subroutine tgm_file_append_real64(file, metadata_json, values, hash, status)
        type(c_ptr), intent(in) :: file
        character(len=*), intent(in) :: metadata_json, hash
        real(c_double), intent(in), target, contiguous :: values(:)
        integer(c_int), intent(out) :: status
        integer(c_int8_t), allocatable, target :: wire(:)
        call tgm_encode_real64(metadata_json, values, hash, wire, status)
        if (status /= TGM_OK) return
        status = c_file_append_raw(file, c_loc(wire), size(wire, kind=c_size_t))
    end subroutine tgm_file_append_real64

    ! Decodes message number i (1-based) of the file.
    subroutine tgm_file_decode(file, i, verify, msg, status)
        type(c_ptr), intent(in) :: file
        integer, intent(in) :: i
        logical, intent(in) :: verify
        type(c_ptr), intent(out) :: msg
        integer(c_int), intent(out) :: status
        status = c_file_decode(file, int(i - 1, c_size_t), 1_c_int32_t, 0_c_int32_t, &
            merge(1_c_int32_t, 0_c_int32_t, verify), msg)
    end subroutine tgm_file_decode

    ! Starts iterating over the messages of the file.
    subroutine tgm_file_iterate(file, iter, status)
        type(c_ptr), intent(in) :: file
        type(c_ptr), intent(out) :: iter
        integer(c_int), intent(out) :: status
        status = c_file_iter_create(file, iter)
    end subroutine tgm_file_iterate

    ! Decodes the next message into msg; .false. (status TGM_END_OF_ITER)
    ! after the last one.
    logical function tgm_file_next(iter, verify, msg, status)
        type(c_ptr), intent(in) :: iter
        logical, intent(in) :: verify
        type(c_ptr), intent(out) :: msg
        integer(c_int), intent(out) :: status
        type(tgm_bytes_t) :: raw
        msg = c_null_ptr
        status = c_file_iter_next(iter, raw)
        tgm_file_next = status == TGM_OK
        if (.not. tgm_file_next) return
        status = c_decode(raw%data, raw%len, 1_c_int32_t, 0_c_int32_t, &
            merge(1_c_int32_t, 0_c_int32_t, verify), msg)
        call c_bytes_free(raw)
        tgm_file_next = status == TGM_OK
    end function tgm_file_next

    subroutine tgm_file_iter_close(iter)
        type(c_ptr), intent(inout) :: iter
        call c_file_iter_free(iter)
        iter = c_null_ptr
    end subroutine tgm_file_iter_close

end module tgm
