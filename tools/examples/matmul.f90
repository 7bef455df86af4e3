! SPDX-License-Identifier: MIT
!
! matmul.f90 - a tiled matrix product C = A B in Fortran through libdao,
! with the three 512 x 512 matrices (6 MiB) under a 1 MiB device budget:
! each kernel holds three 128 x 128 tiles, libdao moves the rest in and out.
! The result is checked against the intrinsic matmul of the whole matrices.
!
! Build: gfortran -I<dir of dao.mod> matmul.f90 -ldao_fortran -ldao
module tiles
  use, intrinsic :: iso_c_binding
  use dao
  implicit none
  integer, parameter :: T = 128 ! tile order

  ! What a kernel is told besides its operands.
  type, bind(C) :: gemm_kind
     integer(c_int) :: accumulate ! 0: C = A B (C is DAO_W), 1: C = C + A B
  end type gemm_kind

contains

  ! Runs on libdao's executor when the three tiles are resident; on the
  ! host backend the operands' pointers are plain host memory.
  function gemm_tile(args) bind(C) result(rc)
    type(dao_kernel_args), intent(in) :: args
    integer(c_int) :: rc
    type(gemm_kind), pointer :: how
    real(c_double), pointer :: a(:, :), b(:, :), c(:, :)

    call c_f_pointer(args%user, how)
    call c_f_pointer(dao_kernel_ptr(args, 1), a, [T, T])
    call c_f_pointer(dao_kernel_ptr(args, 2), b, [T, T])
    call c_f_pointer(dao_kernel_ptr(args, 3), c, [T, T])
    if (how%accumulate /= 0) then
       c = c + matmul(a, b)
    else
       c = matmul(a, b)
    end if
    rc = 0
  end function gemm_tile
end module tiles

program tiled_matmul
  use, intrinsic :: iso_c_binding
  use dao
  use tiles
  implicit none
  integer, parameter :: NT = 4, N = NT * T
  integer(c_int64_t), parameter :: TILE_BYTES = int(T, c_int64_t) * T * 8
  type(gemm_kind), target, save :: first = gemm_kind(0), rest = gemm_kind(1)
  real(c_double), allocatable :: a(:, :), b(:, :), want(:, :)
  real(c_double), target :: tile(T, T)
  type(dao_buf) :: ta(NT, NT), tb(NT, NT), tc(NT, NT)
  type(dao_config) :: cfg
  type(dao_stats) :: stats
  type(dao_ctx) :: ctx
  integer(c_int64_t) :: leaked
  integer :: i, j, k

  ! Small integers: every sum is exact, so the tiled product must equal
  ! the intrinsic one bit for bit.
  allocate(a(N, N), b(N, N))
  do j = 1, N
     do i = 1, N
        a(i, j) = real(mod(i + 2 * j, 7) - 3, c_double)
        b(i, j) = real(mod(3 * i + j, 5) - 2, c_double)
     end do
  end do
  want = matmul(a, b)

  call dao_config_init(cfg)
  cfg%backend = DAO_BACKEND_HOST         ! the kernel is CPU code
  cfg%device_budget = 8 * TILE_BYTES     ! 1 MiB: a sixth of A, B and C
  call check(dao_open(ctx, cfg), "dao_open")

  do j = 1, NT
     do i = 1, NT
        call check(dao_buffer_create(ctx, TILE_BYTES, ta(i, j)), "dao_buffer_create")
        call check(dao_buffer_create(ctx, TILE_BYTES, tb(i, j)), "dao_buffer_create")
        call check(dao_buffer_create(ctx, TILE_BYTES, tc(i, j)), "dao_buffer_create")
        tile = a((i - 1) * T + 1:i * T, (j - 1) * T + 1:j * T)
        call check(dao_write(ctx, ta(i, j), 0_c_int64_t, c_loc(tile), TILE_BYTES), "dao_write")
        tile = b((i - 1) * T + 1:i * T, (j - 1) * T + 1:j * T)
        call check(dao_write(ctx, tb(i, j), 0_c_int64_t, c_loc(tile), TILE_BYTES), "dao_write")
     end do
  end do

  ! C(i,j) = sum over k of A(i,k) B(k,j); the first product overwrites.
  do j = 1, NT
     do i = 1, NT
        do k = 1, NT
           if (k == 1) then
              call check(dao_launch(ctx, gemm_tile, &
                   [dao_operand(ta(i, k), DAO_R), dao_operand(tb(k, j), DAO_R), &
                   dao_operand(tc(i, j), DAO_W)], c_loc(first), "gemm", 2_c_int64_t * T**3), &
                   "dao_launch")
           else
              call check(dao_launch(ctx, gemm_tile, &
                   [dao_operand(ta(i, k), DAO_R), dao_operand(tb(k, j), DAO_R), &
                   dao_operand(tc(i, j), DAO_RW)], c_loc(rest), "gemm", 2_c_int64_t * T**3), &
                   "dao_launch")
           end if
        end do
     end do
  end do

  ! dao_read waits for the kernels before it.
  do j = 1, NT
     do i = 1, NT
        call check(dao_read(ctx, tc(i, j), 0_c_int64_t, c_loc(tile), TILE_BYTES), "dao_read")
        if (maxval(abs(tile - want((i - 1) * T + 1:i * T, (j - 1) * T + 1:j * T))) > 0) then
           print '(a, i0, a, i0, a)', 'tile (', i, ',', j, ') of C differs from matmul(A, B)'
           stop 1
        end if
        call check(dao_release(ctx, ta(i, j)), "dao_release")
        call check(dao_release(ctx, tb(i, j)), "dao_release")
        call check(dao_release(ctx, tc(i, j)), "dao_release")
     end do
  end do

  call check(dao_stats_get(ctx, stats), "dao_stats_get")
  print '(a, i0, a, i0, a, i0, a, i0, a)', 'correct; ', stats%kernels, ' kernels, moved ', &
       stats%h2d_bytes, ' bytes to the device and ', stats%d2h_bytes, ' back, peak ', &
       stats%peak_device_bytes, ' device bytes'
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
end program tiled_matmul
