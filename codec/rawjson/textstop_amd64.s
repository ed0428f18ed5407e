//go:build !purego

#include "textflag.h"

// Each byte of a 32-byte block: a quote, a backslash, the highest control
// character.
DATA quotes<>+0(SB)/8, $0x2222222222222222
DATA quotes<>+8(SB)/8, $0x2222222222222222
DATA quotes<>+16(SB)/8, $0x2222222222222222
DATA quotes<>+24(SB)/8, $0x2222222222222222
GLOBL quotes<>(SB), RODATA|NOPTR, $32

DATA backslashes<>+0(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA backslashes<>+8(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA backslashes<>+16(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA backslashes<>+24(SB)/8, $0x5c5c5c5c5c5c5c5c
GLOBL backslashes<>(SB), RODATA|NOPTR, $32

DATA controls<>+0(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA controls<>+8(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA controls<>+16(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA controls<>+24(SB)/8, $0x1f1f1f1f1f1f1f1f
GLOBL controls<>(SB), RODATA|NOPTR, $32

// func textStopAVX2(b []byte) int
//
// The offset of b's first quote, backslash, byte below 0x20 or byte above
// 0x7f when one lies in its whole 32-byte blocks, else where its last
// partial block begins. A byte above 0x7f is flagged by its own sign bit.
TEXT ·textStopAVX2(SB), NOSPLIT, $0-32
	MOVQ    b_base+0(FP), SI
	MOVQ    b_len+8(FP), CX
	MOVQ    SI, DI
	VMOVDQU quotes<>(SB), Y1
	VMOVDQU backslashes<>(SB), Y2
	VMOVDQU controls<>(SB), Y3

loop:
	CMPQ      CX, $32
	JB        done
	VMOVDQU   (SI), Y0
	VPCMPEQB  Y1, Y0, Y4
	VPCMPEQB  Y2, Y0, Y5
	VPMINUB   Y3, Y0, Y6 // a byte at or below 0x1f is its own minimum with it
	VPCMPEQB  Y6, Y0, Y6
	VPOR      Y5, Y4, Y4
	VPOR      Y6, Y0, Y6
	VPOR      Y6, Y4, Y4
	VPMOVMSKB Y4, AX
	TESTL     AX, AX
	JNZ       found
	ADDQ      $32, SI
	SUBQ      $32, CX
	JMP       loop

found:
	BSFL AX, AX
	ADDQ AX, SI

done:
	SUBQ       DI, SI
	MOVQ       SI, ret+24(FP)
	VZEROUPPER
	RET
