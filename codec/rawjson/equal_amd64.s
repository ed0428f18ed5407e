//go:build !purego

#include "textflag.h"

// func equalAVX2(a, b []byte) bool
//
// Whether a and b hold the same bytes; len(b) = len(a) ≥ 32. 64 bytes a
// turn while more than 64 are left, then a block of 32 if more than 32
// are, then the last 32 bytes (overlapping what was compared).
TEXT ·equalAVX2(SB), NOSPLIT, $0-49
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ b_base+24(FP), DI
	LEAQ -32(SI)(CX*1), R8 // a's last 32 bytes
	LEAQ -32(DI)(CX*1), R9 // b's

loop64:
	CMPQ      CX, $64
	JBE       block32
	VMOVDQU   (SI), Y0
	VMOVDQU   32(SI), Y1
	VPCMPEQB  (DI), Y0, Y0
	VPCMPEQB  32(DI), Y1, Y1
	VPAND     Y1, Y0, Y0
	VPMOVMSKB Y0, AX
	CMPL      AX, $0xffffffff
	JNE       differ
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $64, CX
	JMP       loop64

block32:
	CMPQ      CX, $32
	JBE       last
	VMOVDQU   (SI), Y0
	VPCMPEQB  (DI), Y0, Y0
	VPMOVMSKB Y0, AX
	CMPL      AX, $0xffffffff
	JNE       differ

last:
	VMOVDQU   (R8), Y0
	VPCMPEQB  (R9), Y0, Y0
	VPMOVMSKB Y0, AX
	CMPL      AX, $0xffffffff
	JNE       differ
	MOVB      $1, ret+48(FP)
	VZEROUPPER
	RET

differ:
	MOVB       $0, ret+48(FP)
	VZEROUPPER
	RET
