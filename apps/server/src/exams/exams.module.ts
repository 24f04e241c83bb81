import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CoursesModule } from '../courses/courses.module';
import { EnrollmentsModule } from '../enrollments/enrollments.module';
import { StudentsModule } from '../students/students.module';
import { ExamResult } from './exam-result.entity';
import { ExamResultsService } from './exam-results.service';
import { Exam } from './exam.entity';
import { ExamResultsController, ExamsController } from './exams.controller';
import { ExamsService } from './exams.service';

@Module({
  imports: [
    TypeOrmModule.forFeature([Exam, ExamResult]),
    CoursesModule,
    StudentsModule,
    EnrollmentsModule,
  ],
  controllers: [ExamsController, ExamResultsController],
  providers: [ExamsService, ExamResultsService],
  exports: [ExamsService, ExamResultsService],
})
export class ExamsModule {}
