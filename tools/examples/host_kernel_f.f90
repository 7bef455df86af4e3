! SPDX-License-Identifier: MIT
!
! host_kernel_f.f90 - Fortran CPU code as a kernel on every backend: a host
! kernel (flags=DAO_LAUNCH_HOST) gets its operands' host copies once they
! are current, whatever the backend (DAO_BACKEND picks one, auto by
! default). Each chunk of a vector is scaled to sum to 1.
!
! Build: gfortran -I<dir of dao.mod> host_kernel_f.f90 -ldao_fortran -ldao
module scaling
  use, intrinsic :: iso_c_binding
  use dao
  implicit none
  integer, parameter :: N = 32768 ! doubles per chunk

contains

  function normalise(args) bind(C) result(rc)
    type(dao_kernel_args), intent(in) :: args
    integer(c_int) :: rc
    real(c_double), pointer :: v(:)

    call c_f_pointer(dao_kernel_ptr(args, 1), v, [N])
    v = v / sum(v)
    rc = 0
  end function normalise
end module scaling

program host_kernel
  use, intrinsic :: iso_c_binding
  use dao
  use scaling
  implicit none
  integer, parameter :: CHUNKS = 8
  integer(c_int64_t), parameter :: CHUNK_BYTES = int(N, c_int64_t) * 8
  real(c_double), target :: chunk(N)
  type(dao_buf) :: v(CHUNKS)
  type(dao_config) :: cfg
  type(dao_ctx) :: ctx
  integer(c_int64_t) :: leaked
  integer :: c

  call dao_config_init(cfg)
  cfg%device_budget = 2 * CHUNK_BYTES ! a quarter of the vector
  call check(dao_open(ctx, cfg), "dao_open")
  do c = 1, CHUNKS
     call check(dao_buffer_create(ctx, CHUNK_BYTES, v(c)), "dao_buffer_create")
     chunk = real(c, c_double)
     call check(dao_write(ctx, v(c), 0_c_int64_t, c_loc(chunk), CHUNK_BYTES), "dao_write")
  end do
  do c = 1, CHUNKS
     call check(dao_launch(ctx, normalise, [dao_operand(v(c), DAO_RW)], name="normalise", &
          flops=2_c_int64_t * N, flags=DAO_LAUNCH_HOST), "dao_launch")
  end do
  ! Every element is now 1 / N, exactly.
  do c = 1, CHUNKS
     call check(dao_read(ctx, v(c), 0_c_int64_t, c_loc(chunk), CHUNK_BYTES), "dao_read")
     if (maxval(abs(chunk - 1.0_c_double / N)) > 0) then
        print '(a, i0, a)', 'chunk ', c, ' does not sum to 1'
        stop 1
     end if
     call check(dao_release(ctx, v(c)), "dao_release")
  end do
  print '(a)', 'correct'
  call check(dao_close(ctx, leaked), "dao_close")
  if (leaked /= 0) stop 1

contains

  ! Give up with libdao's explanation of the status.
  subroutine check(st, what)
    integer(c_int), intent(in) :: st
    character(len=*), intent(in) :: what

    if (st /= DAO_OK) then
       print '(a, a, a)', what, ': ', dao_strerror(st)
       stop 1
    end if
  end subroutine check
end program host_kernel
