//go:build !purego

#include "textflag.h"

// The two searches for where a JSON string's plain run stops, plainRun's
// and TextStop's, share their constants and the test of a block.

// The bytes a plain run stops at or below: a quote, a backslash, the
// highest control character; each is broadcast to a 32-byte register.
DATA stops<>+0(SB)/1, $0x22
DATA stops<>+1(SB)/1, $0x5c
DATA stops<>+2(SB)/1, $0x1f
GLOBL stops<>(SB), RODATA|NOPTR, $3

// STOPSETUP broadcasts the stops to Y1, Y2 and Y3, which STOPS reads.
#define STOPSETUP \
	VPBROADCASTB stops<>+0(SB), Y1 \
	VPBROADCASTB stops<>+1(SB), Y2 \
	VPBROADCASTB stops<>+2(SB), Y3

// STOPS sets each byte of flags whose byte in the block src is a quote, a
// backslash or a control character (a byte at or below 0x1f is its own
// minimum with 0x1f); t1 and t2 are scratch.
#define STOPS(src, flags, t1, t2) \
	VPCMPEQB Y1, src, flags \
	VPCMPEQB Y2, src, t1    \
	VPMINUB  Y3, src, t2    \
	VPCMPEQB t2, src, t2    \
	VPOR     t1, flags, flags \
	VPOR     t2, flags, flags

// func plainRunAVX2(b []byte) int
//
// The offset of b's first quote, backslash or byte below 0x20 when one lies
// in its whole 32-byte blocks, else where its last partial block begins:
// 64 bytes a turn while they last, then 32.
TEXT ·plainRunAVX2(SB), NOSPLIT, $0-32
	MOVQ    b_base+0(FP), SI
	MOVQ    b_len+8(FP), CX
	MOVQ    SI, DI
	STOPSETUP

loop64:
	CMPQ     CX, $64
	JB       loop32
	VMOVDQU  (SI), Y0
	VMOVDQU  32(SI), Y7
	STOPS(Y0, Y4, Y5, Y6)  // the first block's flags
	STOPS(Y7, Y8, Y9, Y10) // the second's
	VPOR     Y8, Y4, Y11
	VPTEST   Y11, Y11
	JNZ      found64
	ADDQ     $64, SI
	SUBQ     $64, CX
	JMP      loop64

found64:
	VPMOVMSKB Y4, AX
	TESTL     AX, AX
	JNZ       found
	ADDQ      $32, SI
	VPMOVMSKB Y8, AX
	JMP       found

loop32:
	CMPQ      CX, $32
	JB        done
	VMOVDQU   (SI), Y0
	STOPS(Y0, Y4, Y5, Y6)
	VPMOVMSKB Y4, AX
	TESTL     AX, AX
	JNZ       found
	ADDQ      $32, SI
	SUBQ      $32, CX
	JMP       loop32

found:
	BSFL AX, AX
	ADDQ AX, SI

done:
	SUBQ       DI, SI
	MOVQ       SI, ret+24(FP)
	VZEROUPPER
	RET

// func textStopAVX2(b []byte) int
//
// TextStop: 32 bytes a look from SI, CX bytes left; a block's first
// flagged byte (a byte above 0x7f is flagged by its own sign bit) that
// begins a valid sequence of two, three or four bytes is stepped over, and
// the look goes on from the byte after it.
TEXT ·textStopAVX2(SB), NOSPLIT, $0-32
	MOVQ    b_base+0(FP), SI
	MOVQ    b_len+8(FP), CX
	MOVQ    SI, DI
	STOPSETUP

loop:
	CMPQ      CX, $32
	JB        done
	VMOVDQU   (SI), Y0
	STOPS(Y0, Y4, Y5, Y6)
	VPOR      Y0, Y4, Y4 // and a byte above 0x7f, by its own sign bit
	VPMOVMSKB Y4, AX
	TESTL     AX, AX
	JNZ       found
	ADDQ      $32, SI
	SUBQ      $32, CX
	JMP       loop

found:
	BSFL    AX, AX
	ADDQ    AX, SI
	SUBQ    AX, CX
	MOVBLZX (SI), DX
	CMPL    DX, $0xc2
	JB      done     // a quote, backslash or control, or no lead byte
	CMPL    DX, $0xe0
	JAE     three
	CMPQ    CX, $2   // U+0080 to U+07FF: a lead and a continuation
	JB      done
	MOVBLZX 1(SI), R9
	ANDL    $0xc0, R9
	CMPL    R9, $0x80
	JNE     done
	ADDQ    $2, SI
	SUBQ    $2, CX
	JMP     loop

three:
	CMPL    DX, $0xf0
	JAE     four
	MOVL    $3, R13    // the sequence's length
	MOVL    $0x80, R10 // the second byte's range: 0x80 to 0xbf,
	MOVL    $0xbf, R11
	MOVL    $0xa0, R12 // 0xa0 up after 0xe0 (no overlong form),
	CMPL    DX, $0xe0
	CMOVLEQ R12, R10
	MOVL    $0x9f, R12 // 0x9f down after 0xed (no surrogate)
	CMPL    DX, $0xed
	CMOVLEQ R12, R11
	JMP     second

four:
	CMPL    DX, $0xf4
	JA      done       // 0xf5 to 0xff: no lead byte
	MOVL    $4, R13
	MOVL    $0x80, R10 // the second byte's range: 0x80 to 0xbf,
	MOVL    $0xbf, R11
	MOVL    $0x90, R12 // 0x90 up after 0xf0 (no overlong form),
	CMPL    DX, $0xf0
	CMOVLEQ R12, R10
	MOVL    $0x8f, R12 // 0x8f down after 0xf4 (nothing above U+10FFFF)
	CMPL    DX, $0xf4
	CMOVLEQ R12, R11

second: // R13 bytes from SI: the second in R10..R11, the rest continuations
	CMPQ    CX, R13
	JB      done
	MOVBLZX 1(SI), R9
	CMPL    R9, R10
	JB      done
	CMPL    R9, R11
	JA      done
	MOVBLZX 2(SI), R9
	ANDL    $0xc0, R9
	CMPL    R9, $0x80
	JNE     done
	CMPL    R13, $4
	JB      step
	MOVBLZX 3(SI), R9
	ANDL    $0xc0, R9
	CMPL    R9, $0x80
	JNE     done

step:
	ADDQ    R13, SI
	SUBQ    R13, CX
	JMP     loop

done:
	SUBQ       DI, SI
	MOVQ       SI, ret+24(FP)
	VZEROUPPER
	RET
