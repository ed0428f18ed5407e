//go:build !purego

#include "textflag.h"

// The line-end bytes, "\n" and "\r"; each is broadcast to a 32-byte
// register.
DATA lineEnds<>+0(SB)/1, $0x0a
DATA lineEnds<>+1(SB)/1, $0x0d
GLOBL lineEnds<>(SB), RODATA|NOPTR, $2

// LINEENDS sets AX to the mask of the line ends in the 32 bytes at m.
#define LINEENDS(m) \
	VPCMPEQB  m, Y1, Y3 \
	VPCMPEQB  m, Y2, Y4 \
	VPOR      Y4, Y3, Y3 \
	VPMOVMSKB Y3, AX

// func lineEndAVX2(b []byte) int
//
// The offset of b's first "\n" or "\r", or -1; len(b) ≥ 32. 128 bytes a
// turn while they last (an event is some hundreds), then 32; the bytes
// after the last whole block are looked at in b's last 32 bytes, those
// already looked at masked off, so no read leaves b.
TEXT ·lineEndAVX2(SB), NOSPLIT, $0-32
	MOVQ    b_base+0(FP), SI
	MOVQ    b_len+8(FP), CX
	MOVQ    SI, DI
	LEAQ    -32(SI)(CX*1), R8 // the last block's start
	VPBROADCASTB lineEnds<>+0(SB), Y1
	VPBROADCASTB lineEnds<>+1(SB), Y2

loop128:
	CMPQ     CX, $128
	JB       loop
	VPCMPEQB (SI), Y1, Y3
	VPCMPEQB (SI), Y2, Y4
	VPCMPEQB 32(SI), Y1, Y5
	VPCMPEQB 32(SI), Y2, Y6
	VPCMPEQB 64(SI), Y1, Y7
	VPCMPEQB 64(SI), Y2, Y8
	VPCMPEQB 96(SI), Y1, Y9
	VPCMPEQB 96(SI), Y2, Y10
	VPOR     Y4, Y3, Y3 // each block's line ends
	VPOR     Y6, Y5, Y5
	VPOR     Y8, Y7, Y7
	VPOR     Y10, Y9, Y9
	VPOR     Y5, Y3, Y11
	VPOR     Y9, Y7, Y12
	VPOR     Y12, Y11, Y11
	VPTEST   Y11, Y11
	JNZ      found128
	ADDQ     $128, SI
	SUBQ     $128, CX
	JMP      loop128

found128:
	VPMOVMSKB Y3, AX
	TESTL     AX, AX
	JNZ       found
	ADDQ      $32, SI
	VPMOVMSKB Y5, AX
	TESTL     AX, AX
	JNZ       found
	ADDQ      $32, SI
	VPMOVMSKB Y7, AX
	TESTL     AX, AX
	JNZ       found
	ADDQ      $32, SI
	VPMOVMSKB Y9, AX
	JMP       found

loop:
	CMPQ      SI, R8
	JA        last
	LINEENDS((SI))
	TESTL     AX, AX
	JNZ       found
	ADDQ      $32, SI
	JMP       loop

last:
	MOVQ      SI, CX
	SUBQ      R8, CX // the last block's bytes already looked at: 1 to 32
	CMPQ      CX, $32
	JEQ       none
	LINEENDS((R8))
	SHRL      CX, AX
	SHLL      CX, AX
	TESTL     AX, AX
	JZ        none
	MOVQ      R8, SI

found:
	BSFL       AX, AX
	ADDQ       AX, SI
	SUBQ       DI, SI
	MOVQ       SI, ret+24(FP)
	VZEROUPPER
	RET

none:
	MOVQ       $-1, ret+24(FP)
	VZEROUPPER
	RET
