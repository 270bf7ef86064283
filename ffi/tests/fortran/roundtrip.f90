! Encode, decode, files, iteration and metadata through the Fortran module,
! success and error paths. Usage: roundtrip SCRATCH_DIR
program roundtrip
    use, intrinsic :: iso_c_binding
    use tgm
    implicit none

    character(len=*), parameter :: meta_json = &
        '{"descriptors":[{"type":"ntensor","ndim":2,"shape":[4,3],"strides":[3,1],' // &
        '"dtype":"float64","encoding":"none","filter":"none","compression":"zstd"}],' // &
        '"base":[{"mars":{"param":"2t","step":6,"levelist":850.5}}],"source":"fortran"}'
    integer :: failures = 0
    character(len=4096) :: dir

    if (command_argument_count() /= 1) then
        write (*, '(a)') 'usage: roundtrip SCRATCH_DIR'
        stop 2
    end if
    call get_command_argument(1, dir)

    call test_buffer()
    call test_errors()
    call test_file(trim(dir) // '/fortran.tgm')

    if (failures /= 0) then
        write (*, '(a, i0, a)') 'roundtrip: ', failures, ' check(s) failed'
        error stop 1
    end if
    write (*, '(a)') 'roundtrip: all checks passed'

contains

    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(len=*), intent(in) :: what
        if (.not. ok) then
            failures = failures + 1
            write (*, '(a, a, a, a)') 'CHECK failed: ', what, '; last error: ', tgm_error_message()
        end if
    end subroutine check

    ! Whether a and b hold the same bits.
    logical function identical(a, b)
        real(c_double), intent(in) :: a(:), b(:)
        identical = size(a) == size(b)
        if (identical) identical = all(transfer(a, 0_c_int64_t, size(a)) == transfer(b, 0_c_int64_t, size(b)))
    end function identical

    ! field(i, j) = i + 10 j, a 3 x 4 Fortran array (row-major [4, 3]).
    function sample() result(field)
        real(c_double) :: field(3, 4)
        integer :: i, j
        do j = 1, 4
            do i = 1, 3
                field(i, j) = real(i + 10 * j, c_double) + 0.25_c_double
            end do
        end do
    end function sample

    subroutine test_buffer()
        real(c_double) :: field(3, 4)
        real(c_double), allocatable :: back(:)
        real(c_float), allocatable :: wrong(:)
        integer(c_int8_t), allocatable :: wire(:)
        integer(c_int64_t), allocatable :: shape(:)
        type(c_ptr) :: msg, meta
        integer(c_int) :: status

        field = sample()
        call tgm_encode_real64(meta_json, reshape(field, [12]), 'xxh3', wire, status)
        call check(status == TGM_OK, 'encode')
        call check(size(wire) > 0, 'encoded bytes')
        call tgm_decode_message(wire, .true., msg, status)
        call check(status == TGM_OK, 'decode')
        call check(tgm_message_objects(msg) == 1, 'one object')
        call check(tgm_object_dtype(msg, 1) == 'float64', 'dtype')
        allocate (shape(0)) ! (gfortran 12 warns of an unset descriptor otherwise)
        shape = tgm_object_shape(msg, 1)
        call check(size(shape) == 2, 'rank 2')
        if (size(shape) == 2) call check(shape(1) == 4 .and. shape(2) == 3, 'shape [4, 3]')
        call tgm_object_real64(msg, 1, back, status)
        call check(status == TGM_OK, 'float64 values')
        call check(size(back) == 12, '12 values')
        if (size(back) == 12) call check(identical(back, reshape(field, [12])), 'values identical')
        call tgm_object_real32(msg, 1, wrong, status)
        call check(status == TGM_OBJECT, 'float32 view of float64 refused')
        call check(tgm_object_dtype(msg, 2) == '', 'no object 2')

        call tgm_message_metadata(msg, meta, status)
        call check(status == TGM_OK, 'metadata')
        call check(tgm_meta_string(meta, 'mars.param') == '2t', 'mars.param')
        call check(tgm_meta_string(meta, 'mars.param', obj=1) == '2t', 'mars.param of object 1')
        call check(tgm_meta_string(meta, 'mars.param', obj=2) == '', 'no object 2 entry')
        call check(tgm_meta_string(meta, 'source') == 'fortran', 'source in _extra_')
        call check(tgm_meta_int(meta, 'mars.step', -1_c_int64_t) == 6, 'mars.step')
        call check(tgm_meta_int(meta, 'absent', -1_c_int64_t) == -1, 'default int')
        call check(abs(tgm_meta_real(meta, 'mars.levelist', 0.0_c_double, obj=1) - 850.5_c_double) &
            < 1.0e-12_c_double, 'mars.levelist')
        call tgm_metadata_close(meta)
        call tgm_message_close(msg)
        call tgm_message_close(msg)
    end subroutine test_buffer

    subroutine test_errors()
        integer(c_int8_t), allocatable :: wire(:)
        integer(c_int8_t) :: junk(64)
        real(c_float) :: small(2)
        type(c_ptr) :: msg, file
        integer(c_int) :: status

        junk = 7_c_int8_t
        call tgm_decode_message(junk, .false., msg, status)
        call check(status == TGM_FRAMING, 'garbage is a framing error')
        call check(index(tgm_error_message(), 'tgm_decode') > 0, 'error names the call')
        small = [1.0, 2.0]
        call tgm_encode_real32('{"descriptors":[]}', small, '', wire, status)
        call check(status == TGM_INVALID_ARG, 'object count mismatch')
        call check(size(wire) == 0, 'no bytes on failure')
        call tgm_encode_real32('{not json', small, '', wire, status)
        call check(status == TGM_METADATA, 'bad JSON')
        call tgm_file_open('/nonexistent/dir/x.tgm', file, status)
        call check(status == TGM_IO, 'missing file')
        call check(index(tgm_error_message(), '/nonexistent/dir/x.tgm') > 0, 'error names the path')
    end subroutine test_errors

    subroutine test_file(path)
        character(len=*), intent(in) :: path
        real(c_double) :: field(3, 4)
        real(c_double), allocatable :: back(:)
        type(c_ptr) :: file, iter, msg, meta
        integer(c_int) :: status
        integer :: k, seen

        field = sample()
        call tgm_file_create(path, file, status)
        call check(status == TGM_OK, 'create')
        do k = 1, 3
            call tgm_file_append_real64(file, meta_json, reshape(field * k, [12]), 'xxh3', status)
            call check(status == TGM_OK, 'append')
        end do
        call check(tgm_file_messages(file) == 3, 'three messages')
        call tgm_file_close(file)

        call tgm_file_open(path, file, status)
        call check(status == TGM_OK, 'open')
        call tgm_file_decode(file, 2, .true., msg, status)
        call check(status == TGM_OK, 'decode message 2')
        call tgm_object_real64(msg, 1, back, status)
        if (size(back) == 12) call check(identical(back, reshape(field * 2, [12])), 'message 2 values')
        call tgm_message_close(msg)
        call tgm_file_decode(file, 4, .false., msg, status)
        call check(status == TGM_OBJECT, 'no message 4')

        call tgm_file_iterate(file, iter, status)
        call check(status == TGM_OK, 'iterate')
        seen = 0
        do while (tgm_file_next(iter, .true., msg, status))
            seen = seen + 1
            call tgm_object_real64(msg, 1, back, status)
            if (size(back) == 12) call check(identical(back, reshape(field * seen, [12])), 'iterated values')
            call tgm_message_metadata(msg, meta, status)
            call check(tgm_meta_string(meta, 'mars.param') == '2t', 'iterated metadata')
            call tgm_metadata_close(meta)
            call tgm_message_close(msg)
        end do
        call check(status == TGM_END_OF_ITER, 'iteration ends')
        call check(seen == 3, 'three messages iterated')
        call tgm_file_iter_close(iter)
        call tgm_file_close(file)
    end subroutine test_file

end program roundtrip
