! SPDX-License-Identifier: MIT
!
! dao.f90 - the Fortran 2008 interface of libdao (module dao), over dao.h
! through ISO_C_BINDING. Documentation/fortran.md is the guide.
!
! Handles, operands, the configuration, the statistics and a kernel's
! arguments are interoperable types laid out as in dao.h. Calls whose C
! form takes a string or an optional pointer have a Fortran wrapper here;
! the others bind to the C functions directly. Every function returns a
! dao status (integer(c_int)); dao_strerror turns it into text.
!
! Sizes and offsets are bytes in integer(c_int64_t) (uint64_t in C; values
! of 2**63 and more cannot be written, and no budget or buffer reaches them).
module dao
  use, intrinsic :: iso_c_binding
  implicit none
  private

  ! ------------------------------------------------------------- statuses
  integer(c_int), parameter, public :: DAO_OK = 0, DAO_ERR_NULL = 1, &
       DAO_ERR_INVALID = 2, DAO_ERR_OVERFLOW = 3, DAO_ERR_RANGE = 4, &
       DAO_ERR_HANDLE = 5, DAO_ERR_FOREIGN = 6, DAO_ERR_CLOSED = 7, &
       DAO_ERR_BUDGET = 8, DAO_ERR_HOST_BUDGET = 9, DAO_ERR_NOMEM = 10, &
       DAO_ERR_BACKEND = 11, DAO_ERR_CONFIG = 12, DAO_ERR_CONFLICT = 13, &
       DAO_ERR_KERNEL = 14, DAO_ERR_IO = 15, DAO_ERR_FORMAT = 16, &
       DAO_ERR_FAILED = 17, DAO_ERR_LIMIT = 18, DAO_ERR_REENTRANT = 19, &
       DAO_ERR_LOST = 20

  ! -------------------------------------------------- configuration values
  integer(c_int), parameter, public :: DAO_BACKEND_DEFAULT = 0, &
       DAO_BACKEND_AUTO = 1, DAO_BACKEND_HOST = 2, &
       DAO_BACKEND_CUDA_MANAGED = 3, DAO_BACKEND_CUDA_EXPLICIT = 4
  integer(c_int), parameter, public :: DAO_POLICY_DEFAULT = 0, &
       DAO_POLICY_DAO = 1, DAO_POLICY_BELADY = 2, DAO_POLICY_LRU = 3, &
       DAO_POLICY_FIFO = 4, &
       DAO_POLICY_PLAN = 5
  integer(c_int), parameter, public :: DAO_LOG_DEFAULT = 0, &
       DAO_LOG_SILENT = 1, DAO_LOG_ERROR = 2, DAO_LOG_WARN = 3, &
       DAO_LOG_INFO = 4, DAO_LOG_DEBUG = 5
  integer(c_int32_t), parameter, public :: DAO_CONFIG_PRIVATE = 1, &
       DAO_CONFIG_DETERMINISTIC = 2, DAO_CONFIG_PLAN_DAO_ORDER = 4, &
       DAO_CONFIG_PLAN_CLEAN_FIRST = 8, DAO_CONFIG_PLAN_EAGER = 16

  ! How a kernel uses an operand.
  integer(c_int), parameter, public :: DAO_R = 1, DAO_W = 2, DAO_RW = 3

  ! Launch flags: a host kernel works on host copies with the CPU, on
  ! every backend (dao.h).
  integer(c_int32_t), parameter, public :: DAO_LAUNCH_HOST = 1

  ! ---------------------------------------------------------------- types
  type, bind(C), public :: dao_ctx
     integer(c_int64_t) :: id = 0
  end type dao_ctx

  type, bind(C), public :: dao_buf
     integer(c_int64_t) :: id = 0
  end type dao_buf

  type, bind(C), public :: dao_operand
     type(dao_buf) :: buf
     integer(c_int) :: mode = 0
  end type dao_operand

  ! Fill with dao_config_init; a member left 0 takes its DAO_* variable.
  type, bind(C), public :: dao_config
     integer(c_int32_t) :: size = 0
     integer(c_int32_t) :: flags = 0
     integer(c_int) :: backend = 0
     integer(c_int) :: policy = 0
     integer(c_int) :: log_level = 0
     integer(c_int32_t) :: lookahead = 0
     integer(c_int64_t) :: device_budget = 0
     integer(c_int32_t) :: device_budget_percent = 0
     integer(c_int32_t) :: reserved0 = 0
     integer(c_int64_t) :: host_budget = 0
     type(c_ptr) :: trace_path = c_null_ptr
     type(c_ptr) :: job_name = c_null_ptr
  end type dao_config

  ! What a kernel receives: use dao_kernel_ptr and dao_kernel_size.
  type, bind(C), public :: dao_kernel_args
     type(c_ptr) :: user
     type(c_ptr) :: ptrs
     type(c_ptr) :: sizes
     integer(c_int32_t) :: count
     integer(c_int32_t) :: reserved
     type(c_ptr) :: stream
  end type dao_kernel_args

  type, bind(C), public :: dao_stats
     integer(c_int64_t) :: h2d_bytes, d2h_bytes, fetches, prefetches, &
          writebacks, evictions, drops, stalls, stall_ns, kernels, &
          device_bytes, peak_device_bytes, host_bytes, live_buffers, &
          budget_bytes, host_budget_bytes, pinned_bytes
  end type dao_stats

  type, bind(C), public :: dao_info
     integer(c_int) :: backend, policy
     integer(c_int32_t) :: lookahead, flags
     integer(c_int64_t) :: device_budget, host_budget, device_memory
     type(c_ptr) :: backend_name, policy_name
  end type dao_info

  ! A kernel: a bind(C) function of this interface; 0 for success.
  abstract interface
     function dao_kernel_fn(args) bind(C) result(rc)
       import :: dao_kernel_args, c_int
       type(dao_kernel_args), intent(in) :: args
       integer(c_int) :: rc
     end function dao_kernel_fn
  end interface
  public :: dao_kernel_fn

  ! ------------------------------------------- direct bindings to dao.h
  interface
     subroutine dao_config_init(cfg) bind(C, name="dao_config_init")
       import :: dao_config
       type(dao_config), intent(out) :: cfg
     end subroutine dao_config_init

     function dao_buffer_create(ctx, bytes, out) bind(C, name="dao_buffer_create") result(st)
       import :: dao_ctx, dao_buf, c_int64_t, c_int
       type(dao_ctx), value :: ctx
       integer(c_int64_t), value :: bytes
       type(dao_buf), intent(out) :: out
       integer(c_int) :: st
     end function dao_buffer_create

     function dao_view_create(ctx, of, offset, length, out) &
          bind(C, name="dao_view_create") result(st)
       import :: dao_ctx, dao_buf, c_int64_t, c_int
       type(dao_ctx), value :: ctx
       type(dao_buf), value :: of
       integer(c_int64_t), value :: offset, length
       type(dao_buf), intent(out) :: out
       integer(c_int) :: st
     end function dao_view_create

     function dao_retain(ctx, buf) bind(C, name="dao_retain") result(st)
       import :: dao_ctx, dao_buf, c_int
       type(dao_ctx), value :: ctx
       type(dao_buf), value :: buf
       integer(c_int) :: st
     end function dao_retain

     function dao_release(ctx, buf) bind(C, name="dao_release") result(st)
       import :: dao_ctx, dao_buf, c_int
       type(dao_ctx), value :: ctx
       type(dao_buf), value :: buf
       integer(c_int) :: st
     end function dao_release

     function dao_buffer_size(ctx, buf, bytes) bind(C, name="dao_buffer_size") result(st)
       import :: dao_ctx, dao_buf, c_int64_t, c_int
       type(dao_ctx), value :: ctx
       type(dao_buf), value :: buf
       integer(c_int64_t), intent(out) :: bytes
       integer(c_int) :: st
     end function dao_buffer_size

     ! src, dst: c_loc of the host data (a TARGET array); bytes to copy.
     function dao_write(ctx, buf, offset, src, bytes) bind(C, name="dao_write") result(st)
       import :: dao_ctx, dao_buf, c_int64_t, c_int, c_ptr
       type(dao_ctx), value :: ctx
       type(dao_buf), value :: buf
       integer(c_int64_t), value :: offset
       type(c_ptr), value :: src
       integer(c_int64_t), value :: bytes
       integer(c_int) :: st
     end function dao_write

     function dao_read(ctx, buf, offset, dst, bytes) bind(C, name="dao_read") result(st)
       import :: dao_ctx, dao_buf, c_int64_t, c_int, c_ptr
       type(dao_ctx), value :: ctx
       type(dao_buf), value :: buf
       integer(c_int64_t), value :: offset
       type(c_ptr), value :: dst
       integer(c_int64_t), value :: bytes
       integer(c_int) :: st
     end function dao_read

     function dao_sync(ctx) bind(C, name="dao_sync") result(st)
       import :: dao_ctx, c_int
       type(dao_ctx), value :: ctx
       integer(c_int) :: st
     end function dao_sync

     function dao_iteration(ctx) bind(C, name="dao_iteration") result(st)
       import :: dao_ctx, c_int
       type(dao_ctx), value :: ctx
       integer(c_int) :: st
     end function dao_iteration

     function dao_stats_get(ctx, out) bind(C, name="dao_stats_get") result(st)
       import :: dao_ctx, dao_stats, c_int
       type(dao_ctx), value :: ctx
       type(dao_stats), intent(out) :: out
       integer(c_int) :: st
     end function dao_stats_get

     function dao_info_get(ctx, out) bind(C, name="dao_info_get") result(st)
       import :: dao_ctx, dao_info, c_int
       type(dao_ctx), value :: ctx
       type(dao_info), intent(out) :: out
       integer(c_int) :: st
     end function dao_info_get
  end interface
  public :: dao_config_init, dao_buffer_create, dao_view_create, dao_retain, &
       dao_release, dao_buffer_size, dao_write, dao_read, dao_sync, &
       dao_iteration, dao_stats_get, dao_info_get

  ! ------------------------------------ the C functions the wrappers call
  interface
     function c_open(cfg, out) bind(C, name="dao_open") result(st)
       import :: dao_ctx, c_ptr, c_int
       type(c_ptr), value :: cfg
       type(dao_ctx), intent(out) :: out
       integer(c_int) :: st
     end function c_open

     function c_close(ctx, leaked) bind(C, name="dao_close") result(st)
       import :: dao_ctx, c_ptr, c_int
       type(dao_ctx), value :: ctx
       type(c_ptr), value :: leaked
       integer(c_int) :: st
     end function c_close

     function c_set_label(ctx, buf, label) bind(C, name="dao_set_label") result(st)
       import :: dao_ctx, dao_buf, c_char, c_int
       type(dao_ctx), value :: ctx
       type(dao_buf), value :: buf
       character(kind=c_char), intent(in) :: label(*)
       integer(c_int) :: st
     end function c_set_label

     function c_launch_named(ctx, name, flops, fn, user, ops, count) &
          bind(C, name="dao_launch_named") result(st)
       import :: dao_ctx, dao_operand, c_ptr, c_funptr, c_int64_t, c_size_t, c_int
       type(dao_ctx), value :: ctx
       type(c_ptr), value :: name
       integer(c_int64_t), value :: flops
       type(c_funptr), value :: fn
       type(c_ptr), value :: user
       type(dao_operand), intent(in) :: ops(*)
       integer(c_size_t), value :: count
       integer(c_int) :: st
     end function c_launch_named

     function c_launch_flags(ctx, name, flops, flags, fn, user, ops, count) &
          bind(C, name="dao_launch_flags") result(st)
       import :: dao_ctx, dao_operand, c_ptr, c_funptr, c_int64_t, c_int32_t, c_size_t, c_int
       type(dao_ctx), value :: ctx
       type(c_ptr), value :: name
       integer(c_int64_t), value :: flops
       integer(c_int32_t), value :: flags
       type(c_funptr), value :: fn
       type(c_ptr), value :: user
       type(dao_operand), intent(in) :: ops(*)
       integer(c_size_t), value :: count
       integer(c_int) :: st
     end function c_launch_flags

     function c_strerror(st) bind(C, name="dao_strerror") result(text)
       import :: c_int, c_ptr
       integer(c_int), value :: st
       type(c_ptr) :: text
     end function c_strerror

     function c_parse_size(text, bytes) bind(C, name="dao_parse_size") result(st)
       import :: c_char, c_int64_t, c_int
       character(kind=c_char), intent(in) :: text(*)
       integer(c_int64_t), intent(out) :: bytes
       integer(c_int) :: st
     end function c_parse_size

     function c_strlen(s) bind(C, name="strlen") result(n)
       import :: c_ptr, c_size_t
       type(c_ptr), value :: s
       integer(c_size_t) :: n
     end function c_strlen
  end interface

  public :: dao_open, dao_close, dao_set_label, dao_launch, dao_strerror, &
       dao_parse_size, dao_kernel_ptr, dao_kernel_size, dao_c_string

contains

  ! Open a context; without cfg, everything comes from the DAO_* environment
  ! and the defaults.
  function dao_open(ctx, cfg) result(st)
    type(dao_ctx), intent(out) :: ctx
    type(dao_config), intent(in), optional :: cfg
    integer(c_int) :: st
    type(dao_config), target :: copy

    if (present(cfg)) then
       copy = cfg
       st = c_open(c_loc(copy), ctx)
    else
       st = c_open(c_null_ptr, ctx)
    end if
  end function dao_open

  ! Drain, free everything, close; leaked counts handles never released.
  function dao_close(ctx, leaked) result(st)
    type(dao_ctx), intent(in) :: ctx
    integer(c_int64_t), intent(out), optional :: leaked
    integer(c_int) :: st
    integer(c_int64_t), target :: n

    n = 0
    st = c_close(ctx, c_loc(n))
    if (present(leaked)) leaked = n
  end function dao_close

  function dao_set_label(ctx, buf, label) result(st)
    type(dao_ctx), intent(in) :: ctx
    type(dao_buf), intent(in) :: buf
    character(len=*), intent(in) :: label
    integer(c_int) :: st

    st = c_set_label(ctx, buf, trim(label) // c_null_char)
  end function dao_set_label

  ! Queue kernel with its operands (the contract: it touches only these,
  ! only as declared). user is handed to the kernel; name and flops are for
  ! traces and simulation; flags (DAO_LAUNCH_HOST) as in dao_launch_flags.
  function dao_launch(ctx, kernel, ops, user, name, flops, flags) result(st)
    type(dao_ctx), intent(in) :: ctx
    procedure(dao_kernel_fn) :: kernel
    type(dao_operand), intent(in) :: ops(:)
    type(c_ptr), intent(in), optional :: user
    character(len=*), intent(in), optional :: name
    integer(c_int64_t), intent(in), optional :: flops
    integer(c_int32_t), intent(in), optional :: flags
    integer(c_int) :: st
    character(kind=c_char), allocatable, target :: cname(:)
    type(c_ptr) :: u, n
    integer(c_int64_t) :: f
    integer :: i

    u = c_null_ptr
    if (present(user)) u = user
    n = c_null_ptr
    if (present(name)) then
       allocate(cname(len_trim(name) + 1))
       do i = 1, len_trim(name)
          cname(i) = name(i:i)
       end do
       cname(len_trim(name) + 1) = c_null_char
       n = c_loc(cname)
    end if
    f = 0
    if (present(flops)) f = flops
    ! libdao copies the name and the operands. Without flags, the call
    ! of libdao.so's first version node.
    if (present(flags)) then
       st = c_launch_flags(ctx, n, f, flags, c_funloc(kernel), u, ops, &
            int(size(ops), c_size_t))
    else
       st = c_launch_named(ctx, n, f, c_funloc(kernel), u, ops, int(size(ops), c_size_t))
    end if
  end function dao_launch

  ! libdao's text for a status.
  function dao_strerror(st) result(text)
    integer(c_int), intent(in) :: st
    character(len=:), allocatable :: text

    text = dao_c_string(c_strerror(st))
  end function dao_strerror

  ! "64M", "2G", "1048576" into bytes.
  function dao_parse_size(text, bytes) result(st)
    character(len=*), intent(in) :: text
    integer(c_int64_t), intent(out) :: bytes
    integer(c_int) :: st

    st = c_parse_size(trim(text) // c_null_char, bytes)
  end function dao_parse_size

  ! Device pointer of operand i (1-based, launch order); c_f_pointer it to
  ! an array of the operand's shape. Null for an operand of zero bytes.
  function dao_kernel_ptr(args, i) result(p)
    type(dao_kernel_args), intent(in) :: args
    integer, intent(in) :: i
    type(c_ptr) :: p
    type(c_ptr), pointer :: ptrs(:)

    p = c_null_ptr
    if (i < 1 .or. i > args%count) return
    call c_f_pointer(args%ptrs, ptrs, [args%count])
    p = ptrs(i)
  end function dao_kernel_ptr

  ! Bytes of operand i (1-based); 0 outside 1..count.
  function dao_kernel_size(args, i) result(bytes)
    type(dao_kernel_args), intent(in) :: args
    integer, intent(in) :: i
    integer(c_int64_t) :: bytes
    integer(c_int64_t), pointer :: sizes(:)

    bytes = 0
    if (i < 1 .or. i > args%count) return
    call c_f_pointer(args%sizes, sizes, [args%count])
    bytes = sizes(i)
  end function dao_kernel_size

  ! A NUL-terminated C string (dao_info's names) as Fortran text.
  function dao_c_string(p) result(text)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n

    if (.not. c_associated(p)) then
       text = ''
       return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: text)
    do i = 1, n
       text(i:i) = chars(i)
    end do
  end function dao_c_string
end module dao
